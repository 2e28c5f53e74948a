/* tsc_warn_once: the only way the library talks to the user.  Lock-free
 * (a small table of key hashes claimed with compare-and-swap) so any
 * thread may warn at any time; at most WARN_KEYS distinct warnings per
 * process, then silence rather than a flood. */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

#include "warn.h"

#define WARN_KEYS 64

static _Atomic uint64_t g_warned[WARN_KEYS];
static _Atomic int g_quiet;

void tsc_warn_set_quiet(int quiet) { atomic_store(&g_quiet, quiet); }

/* 1 the first time key is seen. */
static int first_time(const char *key)
{
    uint64_t h = 1469598103934665603ull;
    for (const char *p = key ? key : ""; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ull;
    h |= 1; /* 0 marks an empty slot */
    for (int i = 0; i < WARN_KEYS; i++) {
        uint64_t cur = atomic_load(&g_warned[i]);
        if (cur == h)
            return 0;
        if (cur == 0) {
            uint64_t expect = 0;
            if (atomic_compare_exchange_strong(&g_warned[i], &expect, h))
                return 1;
            if (expect == h)
                return 0;
        }
    }
    return 0;
}

/* One line "tscope: ..." on stderr in one write, so lines from ranks do
 * not interleave. */
static void say_line(const char *fmt, va_list ap)
{
    char line[1024];
    int n = snprintf(line, sizeof line, "tscope: ");
    int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    size_t room = sizeof line - (size_t)n - 2;
    size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m < room ? (size_t)m : room);
    line[len++] = '\n';
    ssize_t w = write(2, line, len);
    (void)w;
}

void tsc_warn_once(const char *key, const char *fmt, ...)
{
    int saved = errno;
    if (first_time(key) && !atomic_load(&g_quiet)) {
        va_list ap;
        va_start(ap, fmt);
        say_line(fmt, ap);
        va_end(ap);
    }
    errno = saved;
}

void tsc_warn_fixed_once(const char *key, const char *line)
{
    int saved = errno;
    if (first_time(key) && !atomic_load(&g_quiet)) {
        char buf[512];
        size_t n = 0;
        for (const char *p = "tscope: "; *p; p++)
            buf[n++] = *p;
        for (const char *p = line; *p && n < sizeof buf - 1; p++)
            buf[n++] = *p;
        buf[n++] = '\n';
        ssize_t w = write(2, buf, n);
        (void)w;
    }
    errno = saved;
}

void tsc_say(const char *fmt, ...)
{
    int saved = errno;
    if (!atomic_load(&g_quiet)) {
        va_list ap;
        va_start(ap, fmt);
        say_line(fmt, ap);
        va_end(ap);
    }
    errno = saved;
}
