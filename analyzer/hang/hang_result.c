/* The hang analysis: runs the three detectors and turns their items into
 * findings. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load/job_build.h"
#include "hang.h"
#include "tsc_format.h"

static long last_common_step(const tsa_job *job)
{
    long m = -1;
    for (size_t i = 0; i < job->n_ranks; i++) {
        long s = (long)job->ranks[i].n_steps;
        if (m < 0 || s < m)
            m = s;
    }
    return m > 0 ? m - 1 : -1;
}

tsa_hang_result *tsa_hang_analyze(const tsa_job *job)
{
    tsa_hang_result *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    h->world_size = -1;
    h->last_step = last_common_step(job);
    for (size_t i = 0; i < job->n_ranks; i++)
        if (job->ranks[i].world_size > h->world_size && job->ranks[i].world_size <= 1 << 24)
            h->world_size = job->ranks[i].world_size;
    /* Ranks of the world with no dump: "no data", not "missing". */
    for (int32_t r = 0; r < h->world_size; r++) {
        int have = 0;
        for (size_t i = 0; i < job->n_ranks && !have; i++)
            have = tsa_hang_rank_id(job, i) == r;
        if (!have && tsa_rank_list_add(&h->no_data, r))
            goto oom;
    }
    if (tsa_hang_find_init_stalls(job, h) || tsa_hang_find_hangs(job, h) ||
        tsa_hang_pin_links(job, h) || tsa_hang_find_desyncs(job, h) ||
        tsa_hang_find_exits(job, h))
        goto oom;
    return h;
oom:
    tsa_hang_free(h);
    return NULL;
}

void tsa_hang_free(tsa_hang_result *h)
{
    if (!h)
        return;
    for (size_t i = 0; i < h->n; i++) {
        tsa_hang_item *it = &h->items[i];
        free(it->title);
        free(it->links);
        tsa_rank_list_free(&it->missing);
        tsa_rank_list_free(&it->stuck);
        tsa_rank_list_free(&it->exited);
        tsa_rank_list_free(&it->no_data);
        tsa_rank_list_free(&it->ranks);
        for (size_t g = 0; g < it->n_groups; g++) {
            tsa_rank_list_free(&it->groups[g].ranks);
            free(it->groups[g].what);
        }
        free(it->groups);
    }
    free(h->items);
    tsa_rank_list_free(&h->no_data);
    free(h);
}

static const char *fix_of(tsa_hang_kind k)
{
    switch (k) {
    case TSA_HANG_HANG:
        return "look at what the missing ranks were doing after their last call (their "
               "stack: py-spy dump, gdb); stuck ranks only wait for them. No missing rank: "
               "the collective itself never completed (network, GPU): check NCCL_DEBUG=WARN "
               "logs and the GPUs of the stuck ranks";
    case TSA_HANG_DESYNC:
        return "the ranks issued different collectives at the same point: look for "
               "rank-dependent control flow (if rank == 0, data-dependent branches, uneven "
               "batches) before this call";
    default:
        return "find out why this rank ended (its own log: exception, OOM, exit call); the "
               "others blocked waiting for it";
    }
}

/* What each kind read from the dumps: the collectives' entries and exits
 * with their sequence numbers, the ranks' END records. */
static void add_evidence(const tsa_hang_result *h, const tsa_hang_item *it, tsa_finding *x)
{
    switch (it->kind) {
    case TSA_HANG_HANG:
        tsa_finding_evidence(x, "collective calls entered and not exited, by sequence number "
                                "%llu on one communicator: %zu rank(s) inside, %zu never entered, "
                                "%zu ended", (unsigned long long)it->seq, it->stuck.n,
                             it->missing.n, it->exited.n);
        tsa_finding_evidence(x, "longest time a stuck rank spent inside, to the end of its "
                                "dump: %.3f s", (double)it->in_flight_ns / 1e9);
        break;
    case TSA_HANG_DESYNC:
        tsa_finding_evidence(x, "the collective each rank issued at sequence number %llu on "
                                "one communicator: %zu different call(s)",
                             (unsigned long long)it->seq, it->n_groups);
        break;
    default:
        tsa_finding_evidence(x, "the rank's END record: %s",
                             it->has_exit_code || it->signal ? "exit code or signal recorded"
                                                             : "no exit code or signal");
        tsa_finding_evidence(x, "other ranks called a shared communicator at a higher sequence "
                                "number than its last call (sequence numbers only, no clock)");
        break;
    }
    if (h->no_data.n)
        tsa_finding_evidence(x, "ranks of the world without a dump: %zu (no data, not "
                                "counted as missing)", h->no_data.n);
}

int tsa_hang_add_findings(const tsa_hang_result *h, tsa_findings *f)
{
    for (size_t i = 0; h && i < h->n; i++) {
        const tsa_hang_item *it = &h->items[i];
        int rank = it->kind == TSA_HANG_EXITED && it->ranks.n == 1 ? it->ranks.v[0] : -1;
        tsa_finding *x = tsa_findings_add(f, it->id, TSA_SEV_CRITICAL, 0, rank, fix_of(it->kind),
                                          "%s", it->title);
        if (!x)
            return -1;
        add_evidence(h, it, x);
        if (it->kind != TSA_HANG_EXITED)
            tsa_finding_number(x, "seq", (double)it->seq);
        if (it->kind == TSA_HANG_HANG) {
            tsa_finding_number(x, "in_flight_s", (double)it->in_flight_ns / 1e9);
            tsa_finding_number(x, "missing", (double)it->missing.n);
            tsa_finding_number(x, "stuck", (double)it->stuck.n);
            tsa_finding_number(x, "exited", (double)it->exited.n);
        }
        if (it->kind == TSA_HANG_EXITED && it->has_exit_code)
            tsa_finding_number(x, "exit_code", it->exit_code);
        if (it->kind == TSA_HANG_EXITED && it->signal)
            tsa_finding_number(x, "signal", it->signal);
        if (h->last_step >= 0)
            tsa_finding_number(x, "last_step", (double)h->last_step);
    }
    return 0;
}
