/* /metrics of `tscope-report live`: see live_http.h. */
#include "live_http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "metrics_http.h"

int tsa_http_listen(const char *addr, unsigned port, char *err, size_t cap)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (port == 0 || port > 65535 || inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
        snprintf(err, cap, "--addr %s / --port %u: not an IPv4 address and port", addr, port);
        return -1;
    }
    int fd = tsc_http_listen(&sa, 0, 16);
    if (fd < 0)
        snprintf(err, cap, "cannot serve /metrics on %s:%u: %s", addr, port, strerror(errno));
    return fd;
}

void tsa_http_answer(int fd, const char *body, size_t len)
{
    int metrics, c = tsc_http_accept(fd, &metrics);
    if (c >= 0)
        tsc_http_reply(c, metrics, body, len);
}
