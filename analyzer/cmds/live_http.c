/* /metrics of `tscope-report live`: see live_http.h. */
#include "live_http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

int tsa_http_listen(const char *addr, unsigned port, char *err, size_t cap)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (port == 0 || port > 65535 || inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
        snprintf(err, cap, "--addr %s / --port %u: not an IPv4 address and port", addr, port);
        return -1;
    }
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
    if (fd >= 0)
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(fd, 16) < 0) {
        snprintf(err, cap, "cannot serve /metrics on %s:%u: %s", addr, port, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

static void send_all(int c, const char *p, size_t n)
{
    while (n) {
        ssize_t w = send(c, p, n, MSG_NOSIGNAL);
        if (w <= 0)
            return;
        p += w;
        n -= (size_t)w;
    }
}

void tsa_http_answer(int fd, const char *body, size_t len)
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
    int ok = !strncmp(req, "GET /metrics", 12) && (req[12] == ' ' || req[12] == '?');
    char head[256];
    int h = snprintf(head, sizeof head,
                     "HTTP/1.0 %s\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
                     "Content-Length: %zu\r\nConnection: close\r\n\r\n",
                     ok ? "200 OK" : "404 Not Found", ok ? len : 0);
    send_all(c, head, (size_t)h);
    if (ok)
        send_all(c, body, len);
    close(c);
}
