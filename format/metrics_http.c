/* See metrics_http.h. */
#include "metrics_http.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

int tsc_http_listen(const struct sockaddr_in *sa, int nonblock, int backlog)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | (nonblock ? SOCK_NONBLOCK : 0), 0);
    if (fd < 0)
        return -1;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, (const struct sockaddr *)sa, sizeof *sa) < 0 || listen(fd, backlog) < 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

int tsc_http_accept(int fd, int *metrics)
{
    *metrics = 0;
    int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
    if (c < 0)
        return -1;
    struct timeval tv = {.tv_usec = 100000};
    setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    char req[1024];
    ssize_t n = recv(c, req, sizeof req - 1, 0);
    req[n > 0 ? n : 0] = 0;
    *metrics = !strncmp(req, "GET /metrics", 12) && (req[12] == ' ' || req[12] == '?');
    return c;
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

void tsc_http_reply(int c, int metrics, const char *body, size_t len)
{
    if (!metrics)
        len = 0;
    char head[256];
    int h = snprintf(head, sizeof head,
                     "HTTP/1.0 %s\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
                     "Content-Length: %zu\r\nConnection: close\r\n\r\n",
                     metrics ? "200 OK" : "404 Not Found", len);
    send_all(c, head, (size_t)h);
    send_all(c, body, len);
    close(c);
}
