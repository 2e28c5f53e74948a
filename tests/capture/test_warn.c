/* The library's only voice: each warning at most once per key, one
 * "tscope: " line per write, the fixed form too (the one a signal handler
 * may use), nothing in quiet mode. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "recorder.h"
#include "recorder_internal.h"

/* What f writes on stderr. */
static size_t stderr_of(void (*f)(void), char *out, size_t cap)
{
    int fds[2], saved = dup(2);
    assert_int_equal(pipe(fds), 0);
    dup2(fds[1], 2);
    f();
    dup2(saved, 2);
    close(saved);
    close(fds[1]);
    size_t n = 0;
    ssize_t r;
    while (n < cap - 1 && (r = read(fds[0], out + n, cap - 1 - n)) > 0)
        n += (size_t)r;
    close(fds[0]);
    out[n] = 0;
    return n;
}

static void twice_each(void)
{
    for (int i = 0; i < 2; i++) {
        tsc_warn_fixed_once("fixed", "the dump could not be finished");
        tsc_warn_once("formatted", "%d ranks", 4);
    }
}

static void test_once_per_key(void **state)
{
    (void)state;
    char out[4096];
    stderr_of(twice_each, out, sizeof out);
    assert_string_equal(out, "tscope: the dump could not be finished\ntscope: 4 ranks\n");
}

static void long_fixed(void)
{
    char line[2000];
    memset(line, 'x', sizeof line - 1);
    line[sizeof line - 1] = 0;
    tsc_warn_fixed_once("long", line);
}

/* A line longer than the buffer is cut, still one line. */
static void test_long_line_cut(void **state)
{
    (void)state;
    char out[4096];
    size_t n = stderr_of(long_fixed, out, sizeof out);
    assert_true(n > 100 && n < 2000);
    assert_int_equal(out[n - 1], '\n');
    assert_ptr_equal(strchr(out, '\n'), out + n - 1);
    assert_int_equal(strncmp(out, "tscope: xxx", 11), 0);
}

static void quiet_warning(void)
{
    tsc_warn_set_quiet(1);
    tsc_warn_fixed_once("quiet", "not said");
    tsc_warn_once("quiet2", "not said either");
    tsc_warn_set_quiet(0);
}

static void test_quiet(void **state)
{
    (void)state;
    char out[256];
    assert_int_equal(stderr_of(quiet_warning, out, sizeof out), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_once_per_key),
        cmocka_unit_test(test_long_line_cut),
        cmocka_unit_test(test_quiet),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
