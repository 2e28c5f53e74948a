/* An output file that is plain or gzip by name, and counts the bytes
 * written before compression (what a viewer will have to load). */
#ifndef TSA_OUT_STREAM_H
#define TSA_OUT_STREAM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <zlib.h>

typedef struct tsa_out {
    FILE *f;            /* plain output (or stdout) */
    gzFile gz;          /* gzip output */
    uint64_t bytes;     /* uncompressed bytes written */
    int failed;         /* a write failed: the file is incomplete */
    int is_stdout;
} tsa_out;

/* Path "-" is stdout.  gzip: 1 force, 0 never, -1 when the name ends in .gz.
 * Returns 0, or -1 (errno set). */
int tsa_out_open(tsa_out *o, const char *path, int gzip);
void tsa_out_write(tsa_out *o, const char *buf, size_t len);
void tsa_out_puts(tsa_out *o, const char *s);
void tsa_out_printf(tsa_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A JSON string with its quotes, escaped by tsa_json_escape. */
void tsa_out_json_string(tsa_out *o, const char *s);
/* Returns 0, or -1 when anything failed (write or close). */
int tsa_out_close(tsa_out *o);

#endif
