#include "cli_number.h"

#include <stdlib.h>

int tsa_cli_long(const char *s, long lo, long hi, long *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

int tsa_cli_double(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end)
        return -1;
    *out = v;
    return 0;
}
