/* Views of a black-box folder (`tscope-report blackbox DIR`): the step
 * timeline of the whole job from the per-step summaries, the ranks'
 * files, and the capture windows; as text or as JSON (docs/blackbox.md). */
#ifndef TSA_BB_TEXT_H
#define TSA_BB_TEXT_H

#include <stdio.h>

#include "load/bb_load.h"
#include "passes/bb_timeline.h"

void tsa_bb_print(FILE *out, const char *dir, const tsa_bb_folder *f, const tsa_bb_timeline *t);

/* The same as one JSON document.  0, or -1 without memory. */
int tsa_bb_print_json(FILE *out, const char *dir, const tsa_bb_folder *f,
                      const tsa_bb_timeline *t);

/* 1 when window w's steps overlap [lo, hi]. */
int tsa_bb_window_overlaps(const tsa_bb_window *w, uint64_t lo, uint64_t hi);

#endif
