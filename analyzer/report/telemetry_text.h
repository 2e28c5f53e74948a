/* Per-rank host and GPU telemetry rows of the text report (CPU busy,
 * threads, runnable threads, CPU limit, workers | SM clock, throttled
 * share, temperature, power); "-" where a rank has no samples. */
#ifndef TSA_TELEMETRY_TEXT_H
#define TSA_TELEMETRY_TEXT_H

#include <stdio.h>

#include "model/analysis.h"

/* 1 when any rank has host or GPU samples. */
int tsa_telemetry_any(const tsa_analysis *a);
void tsa_telemetry_print_rows(FILE *out, const tsa_analysis *a, size_t max_lines);

#endif
