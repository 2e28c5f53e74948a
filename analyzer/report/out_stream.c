#include "out_stream.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json_escape.h"

int tsa_out_open(tsa_out *o, const char *path, int gzip)
{
    memset(o, 0, sizeof *o);
    size_t n = strlen(path);
    if (gzip < 0)
        gzip = n > 3 && !strcmp(path + n - 3, ".gz");
    if (!strcmp(path, "-")) {
        o->is_stdout = 1;
        if (gzip) {
            o->gz = gzdopen(dup(fileno(stdout)), "wb6");
            return o->gz ? 0 : -1;
        }
        o->f = stdout;
        return 0;
    }
    if (gzip) {
        o->gz = gzopen(path, "wb6");
        if (!o->gz)
            return -1;
        gzbuffer(o->gz, 1 << 18);
        return 0;
    }
    o->f = fopen(path, "w");
    return o->f ? 0 : -1;
}

void tsa_out_write(tsa_out *o, const char *buf, size_t len)
{
    if (o->failed || !len)
        return;
    if (o->gz) {
        if (gzwrite(o->gz, buf, (unsigned)len) != (int)len)
            o->failed = 1;
    } else if (o->f) {
        if (fwrite(buf, 1, len, o->f) != len)
            o->failed = 1;
    } else
        o->failed = 1;
    o->bytes += len;
}

void tsa_out_puts(tsa_out *o, const char *s)
{
    tsa_out_write(o, s, strlen(s));
}

void tsa_out_printf(tsa_out *o, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0) {
        o->failed = 1;
        return;
    }
    if ((size_t)n < sizeof buf) {
        tsa_out_write(o, buf, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big) {
        o->failed = 1;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    tsa_out_write(o, big, (size_t)n);
    free(big);
}

void tsa_out_json_string(tsa_out *o, const char *s)
{
    if (!s)
        s = "";
    size_t len = strlen(s);
    char small[512];
    size_t need = tsa_json_escape(s, len, small, sizeof small);
    tsa_out_write(o, "\"", 1);
    if (need < sizeof small)
        tsa_out_write(o, small, need);
    else {
        char *big = malloc(need + 1);
        if (!big) {
            o->failed = 1;
            return;
        }
        tsa_json_escape(s, len, big, need + 1);
        tsa_out_write(o, big, need);
        free(big);
    }
    tsa_out_write(o, "\"", 1);
}

int tsa_out_close(tsa_out *o)
{
    int rc = o->failed ? -1 : 0;
    if (o->gz) {
        if (gzclose(o->gz) != Z_OK)
            rc = -1;
    } else if (o->f) {
        if (o->is_stdout) {
            if (fflush(o->f))
                rc = -1;
        } else if (fclose(o->f))
            rc = -1;
    }
    o->gz = NULL;
    o->f = NULL;
    return rc;
}
