/* The HTTP side of a Prometheus /metrics endpoint, shared by black-box
 * mode's writer thread (preload/blackbox/bb_http.c) and `tscope-report live`
 * (analyzer/cmds/live_http.c): one client at a time, 100 ms to read its
 * request and as long to write the answer, so a slow or silent client
 * costs the serving loop at most ~200 ms. */
#ifndef TSC_METRICS_HTTP_H
#define TSC_METRICS_HTTP_H

#include <netinet/in.h>
#include <stddef.h>

/* A listening IPv4 socket on sa (SO_REUSEADDR, close-on-exec, non-blocking
 * when asked), or -1 with errno set. */
int tsc_http_listen(const struct sockaddr_in *sa, int nonblock, int backlog);

/* Accepts the client waiting on fd and reads its request: the client's
 * socket (or -1), *metrics = 1 when it asked for GET /metrics. */
int tsc_http_accept(int fd, int *metrics);

/* Answers client c (200 with body when metrics, else 404) and closes it. */
void tsc_http_reply(int c, int metrics, const char *body, size_t len);

#endif
