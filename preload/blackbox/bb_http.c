/* HTTP /metrics of black-box mode: see bb_http.h. */
#include "bb_http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "metrics_http.h"
#include "recorder.h"

int bb_http_listen(unsigned port, int local_rank)
{
    const char *addr = getenv("TSCOPE_METRICS_ADDR");
    unsigned p = port + (unsigned)(local_rank > 0 ? local_rank : 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)p)};
    if (p > 65535 || inet_pton(AF_INET, addr && *addr ? addr : "127.0.0.1", &sa.sin_addr) != 1) {
        tsc_warn_once("bb-http", "TSCOPE_METRICS_PORT %u / TSCOPE_METRICS_ADDR '%s' unusable; "
                      "no /metrics endpoint (the metrics file is still written)", p,
                      addr ? addr : "");
        return -1;
    }
    int fd = tsc_http_listen(&sa, 1, 8);
    if (fd < 0)
        tsc_warn_once("bb-http", "cannot serve /metrics on %s:%u: %s; the metrics file is "
                      "still written, the job goes on", addr && *addr ? addr : "127.0.0.1", p,
                      strerror(errno));
    return fd;
}

void bb_http_serve(int fd, const char *path)
{
    int metrics, c = tsc_http_accept(fd, &metrics);
    if (c < 0)
        return;
    char body[65536];
    size_t len = 0;
    if (metrics) {
        int f = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t r = f < 0 ? -1 : read(f, body, sizeof body);
        if (f >= 0)
            close(f);
        len = r > 0 ? (size_t)r : 0;
    }
    tsc_http_reply(c, metrics, body, len);
}
