/* A duration for people: the unit follows the size, so a small cost never
 * reads "0.00 s". */
#include "fmt_duration.h"

#include <math.h>
#include <stdio.h>

const char *tsa_fmt_duration(char *buf, size_t cap, double ns)
{
    double a = fabs(ns);
    if (a >= 1e9)
        snprintf(buf, cap, "%.2f s", ns / 1e9);
    else if (a >= 1e6)
        snprintf(buf, cap, "%.2f ms", ns / 1e6);
    else if (a >= 1e3)
        snprintf(buf, cap, "%.1f us", ns / 1e3);
    else
        snprintf(buf, cap, "%.0f ns", ns);
    return buf;
}
