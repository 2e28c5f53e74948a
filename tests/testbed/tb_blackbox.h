/* What the black-box end-to-end tests share: a folder's capture windows,
 * the steps a window holds on every rank, `tscope-report blackbox`, the
 * ranks' step summaries read straight from their files (through the
 * reader, not through the code under test), and values of Prometheus
 * text. */
#ifndef TB_BLACKBOX_H
#define TB_BLACKBOX_H

#include <stddef.h>
#include <stdint.h>

#include "tsc_format.h"

/* Writes the trigger file out/triggers/name holding text (the folder made
 * when missing), as `tscope-ctl capture` would; its path into path. */
void tbb_put_trigger(const char *out, const char *name, const char *text, char *path,
                     size_t cap);

/* Names of the capture-* folders of dir, sorted, newline-joined (caller
 * frees); their count in *n. */
char *tbb_windows(const char *dir, int *n);

/* One window folder: 4 dumps, each saying the same capture_steps (into
 * steps, "A-B"), and the same NCCL calls from every rank (the same steps,
 * matched by NCCL, not clocks): a call a rank was still inside when the
 * window was cut is in flight there. */
void tbb_expect_same_steps(const char *win_dir, char *steps, size_t cap);

/* `tscope-report blackbox DIR [more1 [more2]]`: stdout (caller frees); the
 * status must be 0. */
char *tbb_report(const char *dir, const char *more1, const char *more2);

/* Every rank summarized steps 0..n-1, at most 1 KiB per step on disk. */
void tbb_expect_summaries(const char *dir, int n);

/* The step summaries of the rank dumps directly in dir, by rank. */
typedef struct tbb_rank_steps {
    int rank;
    tsc_step_summary *s;
    tsc_step_extra *x;    /* beside s: x[i] is s[i]'s extra (flags 0: none) */
    size_t n, cap;
    uint64_t orphan_extras; /* extra records the reader found no summary for */
} tbb_rank_steps;

/* Reads up to max ranks; returns how many (sorted by rank). */
size_t tbb_load_steps(const char *dir, tbb_rank_steps *out, size_t max);
void tbb_free_steps(tbb_rank_steps *r, size_t n);

/* The value of the first series of Prometheus text whose line starts with
 * `name{` and holds `label` (NULL: any); NaN when there is none. */
double tbb_prom(const char *text, const char *name, const char *label);

#endif
