/* A problem found in a dump, counted and passed to the caller's callback
 * (the first TSR_MAX_PROBLEMS_REPORTED of each file). */
#include <stdarg.h>
#include <stdio.h>

#include "reader_internal.h"

void tsr_problem(tsr_file *f, uint64_t offset, const char *fmt, ...)
{
    f->stats.problems++;
    if (f->stats.problems > TSR_MAX_PROBLEMS_REPORTED || !f->cb.on_problem)
        return;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    f->cb.on_problem(f->ctx, f->path, offset, msg);
}
