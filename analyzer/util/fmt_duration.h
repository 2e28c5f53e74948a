#ifndef TSA_FMT_DURATION_H
#define TSA_FMT_DURATION_H

#include <stddef.h>

/* "12.34 s", "5.67 ms", "8.9 us", "12 ns" into buf; returns buf. */
const char *tsa_fmt_duration(char *buf, size_t cap, double ns);

#endif
