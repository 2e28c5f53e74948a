/* Text view of a black-box folder (`tscope-report blackbox DIR`): the
 * step timeline of the whole job from the per-step summaries, the ranks'
 * files, and the capture windows. */
#ifndef TSA_BB_TEXT_H
#define TSA_BB_TEXT_H

#include <stdio.h>

#include "load/bb_load.h"

/* every: one line per step instead of at most 40 rows of step ranges. */
void tsa_bb_print(FILE *out, const char *dir, const tsa_bb_folder *f, int every);

#endif
