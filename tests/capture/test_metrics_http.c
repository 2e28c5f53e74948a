/* The /metrics exchange both the writer thread and `tscope-report live`
 * serve (format/metrics_http.c), over a real loopback socket in one
 * thread: the client's connect and request wait in the kernel until the
 * server takes them. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "metrics_http.h"

/* The whole answer the server gives to `request`, serving `body`. */
static void exchange(const char *request, const char *body, char *answer, size_t cap)
{
    struct sockaddr_in sa = {.sin_family = AF_INET};
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    int fd = tsc_http_listen(&sa, 0, 4);
    assert_true(fd >= 0);
    socklen_t sl = sizeof sa;
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
    int cl = socket(AF_INET, SOCK_STREAM, 0);
    assert_int_equal(connect(cl, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(send(cl, request, strlen(request), 0), (ssize_t)strlen(request));
    int metrics, c = tsc_http_accept(fd, &metrics);
    assert_true(c >= 0);
    tsc_http_reply(c, metrics, body, strlen(body));
    size_t n = 0;
    ssize_t r;
    while (n < cap - 1 && (r = recv(cl, answer + n, cap - 1 - n, 0)) > 0)
        n += (size_t)r;
    answer[n] = 0;
    close(cl);
    close(fd);
}

static void test_metrics(void **state)
{
    (void)state;
    char a[1024];
    exchange("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", "up 1\n", a, sizeof a);
    assert_string_equal(a, "HTTP/1.0 200 OK\r\nContent-Type: text/plain; version=0.0.4; "
                           "charset=utf-8\r\nContent-Length: 5\r\nConnection: close\r\n\r\nup 1\n");
    exchange("GET /metrics?name[]=up HTTP/1.1\r\n\r\n", "up 1\n", a, sizeof a);
    assert_non_null(strstr(a, "200 OK"));
}

/* Another path, a longer one, or another method: 404 without the body. */
static void test_not_metrics(void **state)
{
    (void)state;
    const char *asks[] = {"GET / HTTP/1.1\r\n\r\n", "GET /metricsx HTTP/1.1\r\n\r\n",
                          "POST /metrics HTTP/1.1\r\n\r\n", ""};
    for (size_t i = 0; i < sizeof asks / sizeof *asks; i++) {
        char a[1024];
        exchange(asks[i], "up 1\n", a, sizeof a);
        assert_int_equal(strncmp(a, "HTTP/1.0 404 Not Found\r\n", 24), 0);
        assert_non_null(strstr(a, "Content-Length: 0\r\n"));
        assert_null(strstr(a, "up 1"));
    }
}

/* A port in use: -1 and errno, no socket left behind. */
static void test_port_in_use(void **state)
{
    (void)state;
    struct sockaddr_in sa = {.sin_family = AF_INET};
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    int a = socket(AF_INET, SOCK_STREAM, 0);
    assert_int_equal(bind(a, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(listen(a, 1), 0);
    socklen_t sl = sizeof sa;
    getsockname(a, (struct sockaddr *)&sa, &sl);
    assert_int_equal(tsc_http_listen(&sa, 1, 4), -1);
    assert_int_equal(errno, EADDRINUSE);
    close(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_metrics),
        cmocka_unit_test(test_not_metrics),
        cmocka_unit_test(test_port_in_use),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
