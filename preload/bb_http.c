/* HTTP /metrics of black-box mode: see bb_http.h. */
#include "bb_http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

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
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    int one = 1;
    if (fd >= 0)
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(fd, 8) < 0) {
        tsc_warn_once("bb-http", "cannot serve /metrics on %s:%u: %s; the metrics file is "
                      "still written, the job goes on", addr && *addr ? addr : "127.0.0.1", p,
                      strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

static void send_all(int c, const char *buf, size_t n)
{
    while (n) {
        ssize_t w = send(c, buf, n, MSG_NOSIGNAL);
        if (w <= 0)
            return;
        buf += w;
        n -= (size_t)w;
    }
}

void bb_http_serve(int fd, const char *path)
{
    int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
    if (c < 0)
        return;
    struct timeval tv = {.tv_usec = 100000};
    setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    char req[1024];
    ssize_t n = recv(c, req, sizeof req - 1, 0);
    req[n > 0 ? n : 0] = 0;
    char body[65536];
    size_t len = 0;
    int ok = !strncmp(req, "GET /metrics", 12);
    if (ok) {
        int f = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t r = f < 0 ? -1 : read(f, body, sizeof body);
        if (f >= 0)
            close(f);
        len = r > 0 ? (size_t)r : 0;
    }
    char head[256];
    int h = snprintf(head, sizeof head,
                     "HTTP/1.0 %s\r\nContent-Type: text/plain; version=0.0.4\r\n"
                     "Content-Length: %zu\r\nConnection: close\r\n\r\n",
                     ok ? "200 OK" : "404 Not Found", len);
    send_all(c, head, (size_t)h);
    send_all(c, body, len);
    close(c);
}
