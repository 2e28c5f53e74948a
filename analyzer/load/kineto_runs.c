/* A directory may hold traces of different runs (two experiments copied
 * side by side: trace_diff_control and trace_diff_test of HTA's tests).
 * Merging them would compare ranks of unrelated jobs as if they had waited
 * for each other, so only one run is analysed: the traces that agree on
 * the world size they declare and on the device; the others are named as
 * other runs and as load problems, never mixed in silently. */
#include "kineto/kineto_internal.h"
#include "kineto_runs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job_build.h"

static const char *device_of(const tsa_rank *r)
{
    return r->device_name ? r->device_name : "unknown device";
}

static int same_run(const tsa_rank *a, const tsa_rank *b)
{
    return a->world_size == b->world_size && !strcmp(device_of(a), device_of(b));
}

static void describe(const tsa_rank *r, char *buf, size_t cap)
{
    char ws[32];
    if (r->world_size > 0)
        snprintf(ws, sizeof ws, "world size %d", r->world_size);
    else
        snprintf(ws, sizeof ws, "no world size");
    snprintf(buf, cap, "%s, %s", ws, device_of(r));
}

size_t kineto_keep_one_run(tsa_job *job, tsa_rank *ranks, size_t n)
{
    if (n < 2)
        return n;
    /* The run with the most traces; on a tie the first file's. */
    size_t best = 0, best_count = 0;
    for (size_t i = 0; i < n; i++) {
        size_t count = 0;
        for (size_t j = 0; j < n; j++)
            count += same_run(&ranks[i], &ranks[j]);
        if (count > best_count) {
            best = i;
            best_count = count;
        }
    }
    if (best_count == n)
        return n;
    char main_run[192];
    describe(&ranks[best], main_run, sizeof main_run);
    tsa_rank keep_ref = ranks[best];
    size_t keep = 0;
    for (size_t i = 0; i < n; i++) {
        if (same_run(&ranks[i], &keep_ref)) {
            ranks[keep++] = ranks[i];
            continue;
        }
        char other[192], id[512];
        describe(&ranks[i], other, sizeof other);
        snprintf(id, sizeof id, "%s (%s)", ranks[i].file ? ranks[i].file : "?", other);
        /* Out of memory here only shortens the list; the rank still goes. */
        (void)tsa_job_add_other_run(job, id);
        (void)tsa_job_add_problem(job, ranks[i].file, 0,
                                  "another run (%s) than the %zu trace(s) analysed (%s): "
                                  "not merged; analyse its directory on its own",
                                  other, best_count, main_run);
        tsa_rank_free_contents(&ranks[i]);
    }
    return keep;
}
