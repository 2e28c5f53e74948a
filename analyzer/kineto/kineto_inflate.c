/* A gzip trace decompressed whole, in one call, with libdeflate: on the
 * synthetic traces of docs/benchmarks.md it is about three times zlib's
 * speed (its CRC-32 alone was a twelfth of a trace's parse under zlib).
 * libdeflate has no streaming interface, so the file's text is held whole:
 * one trace per worker, and only up to KINETO_WHOLE_MAX; larger files, plain
 * JSON and builds without libdeflate stream through zlib (kineto_parse.c).
 *
 * It must give what zlib's gzread gives, byte for byte, or give up so
 * that zlib decides.  gzread reads gzip members one after another while
 * the next starts with the magic bytes 1f 8b, and ignores anything else
 * after a member; that is followed here.  zlib checks a header's CRC-16
 * (FHCRC), libdeflate skips it: such files go to zlib.  Any failure at all
 * (bad data, a CRC or length mismatch, a truncated member) goes to zlib
 * too, which then reports the error where it always did. */
#include "kineto_internal.h"
#include "util/mem_hint.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef TSA_HAVE_LIBDEFLATE
#include <libdeflate.h>
#endif

static int zlib_only;

void kineto_inflate_set_zlib_only(int on)
{
    zlib_only = on;
}

/* Also off with TSCOPE_KINETO_ZLIB=1 in the environment (a measure of the
 * zlib path on this build, or a way around a libdeflate in doubt). */
static int off(void)
{
    const char *e = getenv("TSCOPE_KINETO_ZLIB");
    return zlib_only || (e && e[0] == '1');
}

int kineto_inflate_available(void)
{
#ifdef TSA_HAVE_LIBDEFLATE
    return !off();
#else
    return 0;
#endif
}

void kineto_text_free(kineto_whole *w)
{
    free(w->data);
    w->data = NULL;
    w->len = w->cap = 0;
}

#ifdef TSA_HAVE_LIBDEFLATE

#define GZIP_FHCRC 0x02

/* The whole file in a new buffer, if it is at most max bytes; NULL if not
 * (or on any error: the zlib path then says what it was). */
static unsigned char *read_file(const char *path, uint64_t max, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat sb;
    unsigned char *buf = NULL;
    if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size >= 18 &&
        (uint64_t)sb.st_size <= max && (buf = malloc((size_t)sb.st_size))) {
        size_t got = 0, want = (size_t)sb.st_size;
        while (got < want) {
            ssize_t n = read(fd, buf + got, want - got);
            if (n <= 0)
                break;
            got += (size_t)n;
        }
        if (got != want) {
            free(buf);
            buf = NULL;
        }
        *len = got;
    }
    close(fd);
    return buf;
}

static int is_member_start(const unsigned char *p, size_t left)
{
    return left > 1 && p[0] == 0x1f && p[1] == 0x8b;
}

/* Members of in[0..n) one after another into w (grown as needed, at most
 * max bytes in all); 1 when all decoded, 0 to leave it to zlib. */
static int inflate_members(struct libdeflate_decompressor *d, const unsigned char *in, size_t n,
                           uint64_t max, kineto_whole *w)
{
    size_t at = 0;
    w->len = 0;
    do {
        if (n - at < 10 || in[at + 2] != 8 || (in[at + 3] & GZIP_FHCRC))
            return 0;
        for (;;) {
            size_t used_in, used_out;
            enum libdeflate_result r = libdeflate_gzip_decompress_ex(
                d, in + at, n - at, w->data + w->len, w->cap - w->len, &used_in, &used_out);
            if (r == LIBDEFLATE_SUCCESS) {
                at += used_in;
                w->len += used_out;
                break;
            }
            if (r != LIBDEFLATE_INSUFFICIENT_SPACE || w->cap >= max)
                return 0;
            /* The member is decoded again into a buffer twice the size,
             * hinted before the members already decoded are copied in. */
            size_t grown = w->cap * 2 < max ? w->cap * 2 : (size_t)max;
            unsigned char *b = tsa_realloc_huge(w->data, w->len, grown);
            if (!b)
                return 0;
            w->data = b;
            w->cap = grown;
        }
    } while (is_member_start(in + at, n - at));
    return 1;
}

int kineto_inflate_whole(const char *path, uint64_t max_bytes, kineto_whole *w)
{
    w->data = NULL;
    w->len = w->cap = 0;
    if (off())
        return 0;
    uint64_t max = KINETO_WHOLE_MAX;
    if (max_bytes && max_bytes < max)
        max = max_bytes;
    size_t n;
    unsigned char *in = read_file(path, max, &n);
    if (!in)
        return 0;
    int done = 0;
    if (is_member_start(in, n)) {
        /* The last member's size (mod 2^32) from its trailer: the whole
         * text's when there is one member, the usual case. */
        uint64_t isize = (uint64_t)in[n - 4] | (uint64_t)in[n - 3] << 8 |
                         (uint64_t)in[n - 2] << 16 | (uint64_t)in[n - 1] << 24;
        w->cap = isize + 1 < max ? (size_t)isize + 1 : (size_t)max;
        struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
        w->data = d ? malloc(w->cap) : NULL;
        /* 2 MiB pages where the kernel gives them: a 43 MB text written
         * into 4 KiB pages took 10,600 page faults, a quarter of its whole
         * parse's CPU time on this project's VM */
        tsa_hint_huge(w->data, w->cap);
        if (w->data && inflate_members(d, in, n, max, w))
            done = 1;
        else
            kineto_text_free(w);
        if (d)
            libdeflate_free_decompressor(d);
    }
    free(in);
    return done;
}

#else

int kineto_inflate_whole(const char *path, uint64_t max_bytes, kineto_whole *w)
{
    (void)path;
    (void)max_bytes;
    w->data = NULL;
    w->len = w->cap = 0;
    return 0;
}

#endif
