/* The /metrics endpoint of `tscope-report live`: a listening socket and
 * one answer at a time from the text in memory (short timeouts: a slow
 * client costs the loop at most ~200 ms). */
#ifndef TSA_LIVE_HTTP_H
#define TSA_LIVE_HTTP_H

#include <stddef.h>

/* Listen on addr:port (IPv4).  The socket, or -1 with the reason in err. */
int tsa_http_listen(const char *addr, unsigned port, char *err, size_t cap);

/* A client waits on fd: GET /metrics gets body, anything else a 404. */
void tsa_http_answer(int fd, const char *body, size_t len);

#endif
