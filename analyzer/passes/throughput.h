/* Throughput of the analysis window: steps/s, samples/s and tokens/s when
 * the per-rank batch is given (--samples-per-step, --tokens-per-step), and
 * the job's step-time percentiles.
 *
 * The job's time of step k is the longest rank's step k (a synchronous job
 * advances at its slowest rank); percentiles are nearest-rank over the
 * analysed steps.  steps/s = analysed steps / job wall (the longest rank
 * window); samples/s = samples per step per rank x ranks x steps/s. */
#ifndef TSA_THROUGHPUT_H
#define TSA_THROUGHPUT_H

#include <stddef.h>
#include <stdio.h>

#include "model/analysis.h"

/* Fills a->throughput.  -1 on OOM. */
int tsa_throughput_compute(tsa_analysis *a);

/* Nearest-rank percentile p (0-100] of sorted v[0..n); 0 when n == 0. */
int64_t tsa_percentile_sorted(const int64_t *v, size_t n, double p);

/* A sparkline of v (at most `width` cells; wider inputs take the max of
 * each cell's slice), low to high.  utf8: block characters, else the ASCII
 * ramp "_.-~=+*#".  Writes a NUL-terminated string into buf. */
void tsa_sparkline(const int64_t *v, size_t n, size_t width, int utf8, char *buf, size_t cap);

#endif
