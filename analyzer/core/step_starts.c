/* Steps from the starts of a repeated marker: the marker opens each
 * iteration, so step k runs from marker k's start to marker k+1's.  Used
 * for --step-marker ranges and for the calls that mark iterations in a
 * torch.profiler trace without ProfilerStep (DataLoader __next__,
 * Optimizer.step).  Markers nested in one another (a marker inside
 * another's span on the same thread) count once. */
#include "steps.h"

#include <stdlib.h>
#include <string.h>

#include "job_build.h"

int tsa_steps_from_range_starts(tsa_rank *r, const char *needle, int prefix, size_t *cap)
{
    int64_t prev = INT64_MIN, prev_end = INT64_MIN;
    for (size_t i = 0; i < r->n_ranges; i++) {
        const tsa_range *g = &r->ranges[i];
        const char *name = tsa_rank_string(r, g->name);
        int hit = prefix ? !strncmp(name, needle, strlen(needle)) : strstr(name, needle) != NULL;
        if (!hit || (prev != INT64_MIN && g->start_ns < prev_end))
            continue;
        if (prev != INT64_MIN && tsa_step_append(r, cap, prev, g->start_ns))
            return -1;
        prev = g->start_ns;
        prev_end = g->end_ns;
    }
    return 0;
}
