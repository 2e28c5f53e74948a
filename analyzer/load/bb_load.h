/* A black-box folder (docs/blackbox.md): every rank's per-step summaries
 * (STEPS chunks of the dumps directly in the folder) and the capture
 * windows (capture-<id>/ subfolders, one complete dump per rank). */
#ifndef TSA_BB_LOAD_H
#define TSA_BB_LOAD_H

#include <stddef.h>
#include <stdint.h>

#include "tsc_format.h"

typedef struct tsa_bb_rank {
    int rank;                    /* from META, -1 unknown */
    char *path;
    tsc_step_summary *steps;     /* in file order */
    tsc_step_extra *extras;      /* beside steps: extras[i] is steps[i]'s (flags 0: none) */
    size_t n_steps, cap;
    uint64_t file_bytes;
    uint64_t orphan_extras;      /* extra records without a summary (ignored) */
} tsa_bb_rank;

typedef struct tsa_bb_window {
    char *id;                    /* the trigger name: capture-<id> */
    char *steps, *reason, *note; /* from the first dump's META ("" when absent) */
    int has_range;               /* steps is "A-B": */
    uint64_t first, last;        /* A and B */
    size_t n_dumps;
    uint64_t bytes;
} tsa_bb_window;

typedef struct tsa_bb_folder {
    tsa_bb_rank *ranks;          /* sorted by rank */
    size_t n_ranks;
    tsa_bb_window *windows;      /* in step order */
    size_t n_windows;
    uint64_t problems;           /* reader problems, reported on err */
    uint64_t orphan_extras;      /* the ranks' extra records without a summary */
} tsa_bb_folder;

/* 1 when dir's first dump says mode=blackbox (a cheap look at its first
 * META chunk), else 0. */
int tsa_bb_is_folder(const char *dir);

/* Load dir.  0, or -1 with a message in err (nothing readable). */
int tsa_bb_load(const char *dir, tsa_bb_folder *out, char *err, size_t cap);
void tsa_bb_free(tsa_bb_folder *f);

#endif
