/* The per-rank timeline pass.  Everything is exact interval arithmetic
 * over the analysis window, so the budget lines are disjoint sets whose
 * lengths add up to the window:
 *
 *   G  compute: union of non-communication kernels (host-only dumps: the
 *      window minus the time inside NCCL calls)
 *   C  communication: union of NCCL kernels (or NCCL host calls when the
 *      dump has no NCCL kernels)
 *   E  exposed = C - G; overlapped = C ∩ G
 *   Wt wait: per collective, [own arrival, latest arrival) ∩ its interval
 *   D  data stall: GPU idle from a step's start to its first kernel or copy,
 *      only where the records show input work then (input_gap_evidence): a
 *      DataLoader span, steps that each begin with a host-to-device copy,
 *      or the DataLoader worker processes busy around the gap (host
 *      telemetry); without that evidence the gap is host idle, split by
 *      what the host was doing (CPU operators, syncs, launches, nothing
 *      traced)
 *   M  copy only: memcpy/memset records outside G and C (GPU busy, as HTA
 *      counts it; idle is the window minus G, C and M)
 *   H  host idle: the remaining GPU idle while a host launch API call runs
 *   other = window - G - E - D - H - M  */
#include "first_launch.h"
#include "rank_pass.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "group_share.h"
#include "idle_cause.h"
#include "input_workers.h"
#include "kernel_phase.h"
#include "util/interval_set.h"
#include "load/job_build.h"
#include "load/rank_view.h"
#include "util/sat_math.h"
#include "util/radix_sort.h"
#include "tables.h"
#include "tsc_format.h"

void tsa_budget_fill(tsa_budget *b, int64_t wall, int64_t compute, double flops,
                     double peak_flops, int64_t data, int64_t wait, int64_t transfer,
                     int64_t host, int64_t copy)
{
    memset(b, 0, sizeof *b);
    b->wall_ns = wall;
    int64_t useful = compute;
    b->mfu = NAN;
    if (flops > 0 && peak_flops > 0) {
        double ideal = flops / peak_flops * 1e9;
        useful = ideal >= (double)compute ? compute : (int64_t)llround(ideal);
        b->mfu = wall > 0 ? (double)useful / (double)wall : NAN;
    }
    b->line_ns[TSA_BL_USEFUL] = useful;
    b->line_ns[TSA_BL_OVERHEAD] = compute - useful;
    b->line_ns[TSA_BL_DATA_STALL] = data;
    b->line_ns[TSA_BL_COMM_WAIT] = wait;
    b->line_ns[TSA_BL_COMM_TRANSFER] = transfer;
    b->line_ns[TSA_BL_HOST_IDLE] = host;
    b->line_ns[TSA_BL_COPY] = copy;
    b->line_ns[TSA_BL_OTHER] = wall - compute - data - wait - transfer - host - copy;
}

typedef struct sets {
    tsa_ivset g, c, e, wt, d, h, busy, idle, tmp, fwd, bwd, opt, copies, api, gc, first;
} sets;

static void sets_free(sets *s)
{
    tsa_ivset *all[] = {&s->g, &s->c, &s->e, &s->wt, &s->d, &s->h, &s->busy, &s->idle,
                        &s->tmp, &s->fwd, &s->bwd, &s->opt, &s->copies, &s->api, &s->gc, &s->first};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        tsa_ivset_free(all[i]);
}

static int64_t clip_len(int64_t s, int64_t e, int64_t w0, int64_t w1)
{
    if (s < w0)
        s = w0;
    if (e > w1)
        e = w1;
    return e > s ? e - s : 0;
}

/* GPU idle after the step-start stall d, by what the host was doing, in
 * this order: waiting for data (joins d), synchronising and blocking
 * allocator calls (a copy that blocks is a sync, not a launch), launch
 * calls (api), CPU operators, Python with no operator running; these join
 * h, the host idle line, and what no host record covers stays "other". */
static int explain_idle(const tsa_rank *r, const tsa_ivset *idle, tsa_ivset *d,
                        const tsa_ivset *api, const tsa_ivset *first, tsa_ivset *h,
                        tsa_rank_result *res)
{
    tsa_ivset rest, tmp, launch, cold, out[TSA_HOST_KINDS];
    tsa_ivset_init(&rest);
    tsa_ivset_init(&tmp);
    tsa_ivset_init(&launch);
    tsa_ivset_init(&cold);
    for (int k = 0; k < TSA_HOST_KINDS; k++)
        tsa_ivset_init(&out[k]);
    res->idle_ns[TSA_IDLE_DATA_START] = tsa_ivset_length(d);
    static const tsa_idle_cause cause[TSA_HOST_KINDS] = {
        TSA_IDLE_DATA_LOADER, TSA_IDLE_SYNC, TSA_IDLE_ALLOC, TSA_IDLE_CPU_OP, TSA_IDLE_PYTHON};
    int rc = tsa_ivset_subtract(idle, d, &rest) ||
             tsa_idle_split(r, &rest, TSA_HOST_DATA, TSA_HOST_ALLOC, out) ||
             tsa_ivset_intersect(&rest, api, &launch) || tsa_ivset_subtract(&rest, &launch, &tmp) ||
             tsa_ivset_copy(&tmp, &rest) ||
             tsa_idle_split(r, &rest, TSA_HOST_CPU_OP, TSA_HOST_PYTHON, out);
    /* a kernel's first launch loads its module: a start-up cost */
    rc = rc || tsa_ivset_intersect(&launch, first, &cold) ||
         tsa_ivset_subtract(&launch, &cold, &tmp);
    res->idle_ns[TSA_IDLE_LAUNCH] = tsa_ivset_length(&tmp);
    res->idle_ns[TSA_IDLE_FIRST_LAUNCH] = tsa_ivset_length(&cold);
    tsa_ivset_clear(h);
    rc = rc || tsa_ivset_copy(&launch, h);
    for (int k = 0; k < TSA_HOST_KINDS && !rc; k++) {
        res->idle_ns[cause[k]] = tsa_ivset_length(&out[k]);
        tsa_ivset *into = k == TSA_HOST_DATA ? d : h;
        rc = tsa_ivset_union(into, &out[k], &tmp) || tsa_ivset_copy(&tmp, into);
    }
    res->idle_ns[TSA_IDLE_UNTRACED] = tsa_ivset_length(&rest);
    tsa_ivset_free(&rest);
    tsa_ivset_free(&tmp);
    tsa_ivset_free(&launch);
    tsa_ivset_free(&cold);
    for (int k = 0; k < TSA_HOST_KINDS; k++)
        tsa_ivset_free(&out[k]);
    return rc ? -1 : 0;
}

/* How a step [ss, se) opens: its first compute kernel or copy (NCCL
 * kernels of the previous step's tail do not end a stall; se when none),
 * whether that is a host-to-device copy, and whether a compute kernel
 * runs in the step.  *ki and *ci move to the step's first kernel and copy
 * (steps in order). */
typedef struct step_open {
    int64_t first;
    int h2d, computes;
} step_open;

static step_open step_opening(const tsa_rank *r, int64_t ss, int64_t se, size_t *ki, size_t *ci)
{
    while (*ki < r->n_kernels && r->kernels[*ki].start_ns < ss)
        (*ki)++;
    while (*ci < r->n_copies && r->copies[*ci].start_ns < ss)
        (*ci)++;
    step_open o = {se, 0, 0};
    for (size_t k = *ki; k < r->n_kernels && r->kernels[k].start_ns < se; k++)
        if (r->kernels[k].category != TSA_KCAT_COMM) {
            o.first = r->kernels[k].start_ns;
            o.computes = 1;
            break;
        }
    if (*ci < r->n_copies && r->copies[*ci].start_ns < o.first) {
        o.first = r->copies[*ci].start_ns;
        o.h2d = r->copies[*ci].dir == TSA_COPY_H2D;
    }
    return o;
}

/* Steps of the window that open with a host-to-device copy and then run
 * kernels: the loop copies its input batch each step (a step of copies
 * alone, a transfer benchmark, is not waiting for input: it is the work). */
static size_t steps_opening_with_h2d(const tsa_rank *r, int64_t w0, int64_t w1)
{
    size_t n = 0, ki = 0, ci = 0;
    for (size_t st = 0; st < r->n_steps; st++) {
        const tsa_step *p = &r->steps[st];
        if (p->end_ns > w0 && p->start_ns < w1) {
            step_open o = step_opening(r, p->start_ns, p->end_ns, &ki, &ci);
            n += o.h2d && o.computes;
        }
    }
    return n;
}

/* What shows the GPU idle [s, e) at a step's start waiting for input
 * (enum tsa_input_kind), or -1 when nothing does: a DataLoader span of the
 * host overlaps it; the step's first GPU work is a host-to-device copy in
 * a loop whose steps (at least two) each open that way; or the DataLoader
 * workers ran busy around it (TSA_WORKERS_BUSY; *cpus their mean CPU).
 * One copy at the start of a single step is as likely the model's weights
 * as a batch, so it is no evidence; nor are idle workers, or none.  The
 * evidence holds for the whole gap: the loop waits until its batch is
 * there. */
static int input_gap_evidence(const tsa_rank *r, int64_t s, int64_t e, int opens_with_h2d,
                              int h2d_loop, const tsa_workers *workers, double *cpus)
{
    for (size_t i = 0; i < r->n_host_spans; i++) {
        const tsa_host_span *h = &r->host_spans[i];
        if (h->start_ns >= e)
            break; /* sorted by start */
        if (h->kind == TSA_HOST_DATA && h->end_ns > s)
            return TSA_INPUT_LOADER;
    }
    if (h2d_loop && opens_with_h2d)
        return TSA_INPUT_H2D;
    *cpus = tsa_workers_cpus(r, workers, s, e);
    return *cpus >= TSA_WORKERS_BUSY ? TSA_INPUT_WORKERS : -1;
}

int tsa_rank_pass(tsa_rank *r, const tsa_arrivals *arr, double flops, double peak_flops,
                  tsa_rank_result *res)
{
    const int64_t w0 = res->window_start_ns, w1 = res->window_end_ns;
    sets s;
    memset(&s, 0, sizeof s);
    int oom = 0;
    /* Copies are GPU records: a rank that only copies (a PCIe benchmark)
     * has GPU time, all of it on the memcpy line. */
    int gpu = r->n_kernels > 0 || r->n_copies > 0;
    int64_t data = 0, host = 0, copy = 0;
    res->gpu = gpu;
    memset(res->idle_ns, 0, sizeof res->idle_ns);
    res->host_data = 0;
    memset(&res->input, 0, sizeof res->input);
    int have_comm_kernels = 0;

    /* Communication set and the compute sets (per phase). */
    for (size_t i = 0; i < r->n_kernels; i++) {
        tsa_kernel *k = &r->kernels[i];
        k->phase = (uint8_t)tsa_kernel_phase(r, k);
        if (k->category == TSA_KCAT_COMM)
            have_comm_kernels = 1;
        int64_t d = clip_len(k->start_ns, k->end_ns, w0, w1);
        if (d > 0 || (k->start_ns >= w0 && k->start_ns < w1)) {
            TSA_SAT_ACC(res->kcat_ns[k->category], d);
            res->kcat_count[k->category]++;
        }
        if (k->end_ns <= w0 || k->start_ns >= w1)
            continue;
        tsa_ivset *target = k->phase == TSA_PHASE_COMM        ? &s.c
                            : k->phase == TSA_PHASE_OPTIMIZER ? &s.opt
                            : k->phase == TSA_PHASE_BACKWARD  ? &s.bwd
                                                              : &s.fwd;
        oom |= tsa_ivset_push(target, k->start_ns, k->end_ns);
    }
    if (!have_comm_kernels) {
        for (size_t i = 0; i < r->n_nccl; i++) {
            const tsa_nccl_op *op = &r->nccl[i];
            if (tsc_nccl_op_is_setup(op->op))
                continue; /* communicator set-up is not step communication */
            oom |= tsa_ivset_push(&s.c, op->start_ns, op->end_ns);
        }
    }
    tsa_ivset *phase_sets[] = {&s.c, &s.opt, &s.bwd, &s.fwd};
    for (size_t i = 0; i < 4; i++) {
        tsa_ivset_normalize(phase_sets[i]);
        tsa_ivset_clip(phase_sets[i], w0, w1);
    }
    if (oom)
        goto fail;
    if (gpu) {
        oom |= tsa_ivset_union(&s.fwd, &s.bwd, &s.tmp);
        oom |= tsa_ivset_union(&s.tmp, &s.opt, &s.g);
    } else {
        /* Host-only: compute is the time between collectives (none
         * measured at all when there are no collectives either). */
        if (r->n_nccl)
            oom |= tsa_ivset_push(&s.tmp, w0, w1);
        oom |= tsa_ivset_subtract(&s.tmp, &s.c, &s.g);
        /* A trace's DataLoader spans say when the loop waited for data:
         * that time is a data stall, and the rest of the host's time
         * outside collectives its compute. */
        if (!oom && r->n_host_spans && !tsa_host_data_wait(r, w0, w1, &s.c, &s.d) && s.d.n) {
            tsa_ivset_clear(&s.tmp);
            oom |= tsa_ivset_push(&s.tmp, w0, w1);
            oom |= tsa_ivset_subtract(&s.tmp, &s.c, &s.busy);
            oom |= tsa_ivset_subtract(&s.busy, &s.d, &s.g);
            data = tsa_ivset_length(&s.d);
            res->host_data = 1;
            res->idle_ns[TSA_IDLE_DATA_LOADER] = data;
        }
        oom |= tsa_ivset_copy(&s.g, &s.fwd); /* all of it counts as forward */
    }
    oom |= tsa_ivset_subtract(&s.c, &s.g, &s.e);
    if (oom)
        goto fail;
    res->compute_ns = tsa_ivset_length(&s.g);
    res->overlap.comm_ns = tsa_ivset_length(&s.c);
    res->overlap.exposed_ns = tsa_ivset_length(&s.e);
    res->overlap.overlapped_ns = res->overlap.comm_ns - res->overlap.exposed_ns;

    /* Waiting for peers: [own arrival, latest arrival) of each collective. */
    for (size_t i = 0; i < r->n_nccl && arr && arr->n; i++) {
        const tsa_nccl_op *op = &r->nccl[i];
        if (!tsa_counts_for_arrival(op) || op->gpu_end_ns <= w0 || op->gpu_start_ns >= w1)
            continue;
        int64_t latest = tsa_arrivals_latest(arr, op->comm_id, op->seq);
        if (latest == INT64_MIN)
            continue;
        int64_t own_latest = tsa_sat_add(latest, r->clock_offset_ns == INT64_MIN
                                                     ? INT64_MAX
                                                     : -r->clock_offset_ns);
        int64_t op_end = op->gpu_end_ns;
        if (op->kernel < 0 && (op->group_depth > 0 || (op->flags & TSC_NCCL_F_IN_GROUP))) {
            /* A grouped host call returns at once; the rank waits for its
             * peers in the GroupEnd that closes the group. */
            for (size_t j = i + 1; j < r->n_nccl && j < i + 4096; j++)
                if (r->nccl[j].op == TSC_NCCL_GROUP_END && r->nccl[j].tid == op->tid) {
                    if (r->nccl[j].end_ns > op_end)
                        op_end = r->nccl[j].end_ns;
                    break;
                }
        }
        int64_t end = own_latest < op_end ? own_latest : op_end;
        oom |= tsa_ivset_push(&s.wt, op->gpu_start_ns, end);
    }
    tsa_ivset_normalize(&s.wt);
    res->overlap.exposed_wait_ns = tsa_ivset_intersect_length(&s.e, &s.wt);
    res->overlap.exposed_transfer_ns = res->overlap.exposed_ns - res->overlap.exposed_wait_ns;
    /* Exposed time per NCCL function and size bucket: each communication
     * nanosecond belongs to the earliest-started call running then, so the
     * rows add up to the exposed total (when every NCCL kernel is linked
     * to its call). */
    if (!oom && r->n_nccl && tsa_ivset_intersect(&s.e, &s.wt, &s.tmp) == 0) {
        /* Group members stand for slices of their GroupEnd (group_share.h). */
        tsa_sort_key *order = malloc(r->n_nccl * sizeof *order);
        tsa_call_span *sp = tsa_call_spans(r);
        if (!order || !sp) {
            oom = 1;
        } else {
            for (size_t i = 0; i < r->n_nccl; i++) {
                order[i].key = sp[i].start_ns;
                order[i].idx = i;
            }
            if (tsa_sort_keys(order, r->n_nccl))
                oom = 1;
            int64_t covered = INT64_MIN;
            for (size_t k = 0; k < r->n_nccl && !oom; k++) {
                const tsa_nccl_op *op = &r->nccl[order[k].idx];
                const tsa_call_span *c = &sp[order[k].idx];
                if (op->op >= TSA_COLL_ROWS || c->skip || c->end_ns <= covered)
                    continue;
                int64_t from = c->start_ns > covered ? c->start_ns : covered;
                covered = c->end_ns;
                /* Only calls that start in the window, as the collective
                 * table counts them: a row's exposed time never exceeds
                 * its time. */
                if (c->start_ns < w0 || c->start_ns >= w1)
                    continue;
                int64_t x = tsa_ivset_length_in(&s.e, from, c->end_ns);
                TSA_SAT_ACC(res->coll_exposed_ns[op->op], x);
                TSA_SAT_ACC(res->coll_exposed_wait_ns[op->op],
                            x ? tsa_ivset_length_in(&s.tmp, from, c->end_ns) : 0);
                TSA_SAT_ACC(res->coll_bucket_exposed_ns[op->op][tsa_nccl_size_bucket(op)], x);
            }
        }
        free(order);
        free(sp);
    } else if (r->n_nccl) {
        oom = 1;
    }

    /* GPU idle, split into data stall, host idle and the rest. */
    if (gpu) {
        for (size_t i = 0; i < r->n_copies; i++)
            oom |= tsa_ivset_push(&s.copies, r->copies[i].start_ns, r->copies[i].end_ns);
        tsa_ivset_normalize(&s.copies);
        tsa_ivset_clip(&s.copies, w0, w1);
        oom |= tsa_ivset_union(&s.g, &s.c, &s.gc);
        oom |= tsa_ivset_union(&s.gc, &s.copies, &s.busy);
        if (oom)
            goto fail;
        copy = tsa_ivset_length(&s.busy) - tsa_ivset_length(&s.gc);
        tsa_ivset_clear(&s.tmp);
        oom |= tsa_ivset_push(&s.tmp, w0, w1);
        oom |= tsa_ivset_subtract(&s.tmp, &s.busy, &s.idle);
        if (oom)
            goto fail;
        /* Data stall: idle from each step's start to its first GPU work,
         * where the trace shows the step waiting for input. */
        int h2d_loop = steps_opening_with_h2d(r, w0, w1) >= 2;
        tsa_workers workers;
        oom |= tsa_workers_of(r, w0, w1, &workers);
        size_t ki = 0, ci = 0;
        for (size_t st = 0; st < r->n_steps && !oom; st++) {
            int64_t ss = r->steps[st].start_ns, se = r->steps[st].end_ns;
            if (se <= w0 || ss >= w1)
                continue;
            step_open o = step_opening(r, ss, se, &ki, &ci);
            double cpus = 0;
            int kind = o.first > ss ? input_gap_evidence(r, ss, o.first, o.h2d, h2d_loop,
                                                         &workers, &cpus)
                                    : -1;
            if (kind < 0)
                continue;
            oom |= tsa_ivset_push(&s.d, ss, o.first);
            res->input.gaps[kind]++;
            if (kind == TSA_INPUT_WORKERS)
                res->input.worker_cpus_sum += cpus;
        }
        tsa_workers_free(&workers);
        tsa_ivset_normalize(&s.d);
        oom |= tsa_ivset_intersect(&s.idle, &s.d, &s.tmp);
        if (oom)
            goto fail;
        oom |= tsa_ivset_copy(&s.tmp, &s.d);
        data = tsa_ivset_length(&s.d);
        /* Host idle: the rest of the idle time while the host was busy:
         * in launch calls, syncs, allocator calls, CPU operators. */
        for (size_t i = 0; i < r->n_apis; i++)
            oom |= tsa_ivset_push(&s.api, r->apis[i].start_ns, r->apis[i].end_ns);
        tsa_ivset_normalize(&s.api);
        oom |= tsa_first_launches(r, &s.first);
        if (oom || explain_idle(r, &s.idle, &s.d, &s.api, &s.first, &s.h, res))
            goto fail;
        data = tsa_ivset_length(&s.d);
        host = tsa_ivset_length(&s.h);
    }
    tsa_budget_fill(&res->budget, w1 - w0, res->compute_ns, flops, peak_flops, data,
                    res->overlap.exposed_wait_ns, res->overlap.exposed_transfer_ns, host, copy);

    /* Exclusive compute phases: optimizer, then backward, then forward. */
    {
        tsa_ivset bwd_only, fwd_only, t2;
        tsa_ivset_init(&bwd_only);
        tsa_ivset_init(&fwd_only);
        tsa_ivset_init(&t2);
        oom |= tsa_ivset_subtract(&s.bwd, &s.opt, &bwd_only);
        oom |= tsa_ivset_subtract(&s.fwd, &s.opt, &t2);
        oom |= tsa_ivset_subtract(&t2, &bwd_only, &fwd_only);
        for (size_t st = 0; st < r->n_steps && !oom; st++) {
            tsa_step *p = &r->steps[st];
            memset(p->phase_ns, 0, sizeof p->phase_ns);
            int64_t a = p->start_ns, b = p->end_ns;
            p->compute_ns = tsa_ivset_length_in(&s.g, a, b);
            p->comm_ns = tsa_ivset_length_in(&s.c, a, b);
            p->phase_ns[TSA_PHASE_DATA] = tsa_ivset_length_in(&s.d, a, b);
            p->phase_ns[TSA_PHASE_OPTIMIZER] = tsa_ivset_length_in(&s.opt, a, b);
            p->phase_ns[TSA_PHASE_BACKWARD] = tsa_ivset_length_in(&bwd_only, a, b);
            p->phase_ns[TSA_PHASE_FORWARD] = tsa_ivset_length_in(&fwd_only, a, b);
            p->phase_ns[TSA_PHASE_COMM] = tsa_ivset_length_in(&s.e, a, b);
            p->phase_ns[TSA_PHASE_IDLE] = tsa_ivset_length_in(&s.h, a, b);
            int64_t known = 0;
            for (int ph = TSA_PHASE_DATA; ph < TSA_PHASE_OTHER; ph++)
                known += p->phase_ns[ph];
            /* Parts outside the window are not clipped sets: keep >= 0. */
            p->phase_ns[TSA_PHASE_OTHER] = (b - a) - known > 0 ? (b - a) - known : 0;
            if (!p->warmup)
                for (int ph = 0; ph < TSA_PHASE_COUNT; ph++)
                    TSA_SAT_ACC(res->phase_ns[ph], p->phase_ns[ph]);
        }
        tsa_ivset_free(&bwd_only);
        tsa_ivset_free(&fwd_only);
        tsa_ivset_free(&t2);
    }
    if (oom)
        goto fail;
    sets_free(&s);
    return 0;
fail:
    sets_free(&s);
    return -1;
}
