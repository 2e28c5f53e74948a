/* Filling a diff side (diff.h) from an analysis. */
#ifndef TSA_DIFF_SIDE_H
#define TSA_DIFF_SIDE_H

#include "model/analysis.h"
#include "diff.h"

/* s borrows names from a and its job: keep both alive while s is used. */
void tsa_diff_side_from_analysis(const tsa_analysis *a, const char *label, tsa_diff_side *s);

#endif
