/* Step detection.  DDP and FSDP issue the same collectives (same op, same
 * communicator, same size) in the same order every step, so the sequence of
 * collective signatures is periodic with the step: its period gives the
 * collectives per step, and the rotation is chosen so that a step begins
 * after the longest pause between collectives (data loading and forward). */
#include "steps.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_span.h"
#include "steps_toplevel.h"
#include "load/job_build.h"
#include "tsc_format.h"

size_t tsa_sequence_period(const uint64_t *seq, size_t n)
{
    if (n == 0)
        return 0;
    size_t *pi = malloc(n * sizeof *pi);
    if (!pi)
        return n;
    pi[0] = 0;
    for (size_t i = 1; i < n; i++) {
        size_t k = pi[i - 1];
        while (k > 0 && seq[i] != seq[k])
            k = pi[k - 1];
        if (seq[i] == seq[k])
            k++;
        pi[i] = k;
    }
    size_t p = n - pi[n - 1];
    free(pi);
    return p;
}

int tsa_default_warmup(size_t steps)
{
    if (steps >= 5)
        return 2;
    if (steps >= 3)
        return 1;
    return 0;
}

static uint64_t signature(const tsa_nccl_op *op)
{
    uint64_t h = 1469598103934665603ull;
    uint64_t parts[3] = {op->op, op->comm_id, op->bytes};
    for (int i = 0; i < 3; i++) {
        h ^= parts[i];
        h *= 1099511628211ull;
        h ^= h >> 29;
    }
    return h;
}

/* Calls that take part in the step pattern: collectives and point-to-point. */
static int patterned(const tsa_nccl_op *op)
{
    return tsc_nccl_op_is_sequenced(op->op);
}

int tsa_step_append(tsa_rank *r, size_t *cap, int64_t s, int64_t e)
{
    if (e <= s)
        return 0;
    if (r->n_steps == *cap) {
        size_t c = *cap ? *cap * 2 : 64;
        tsa_step *p = realloc(r->steps, c * sizeof *p);
        if (!p)
            return -1;
        r->steps = p;
        *cap = c;
    }
    tsa_step *st = &r->steps[r->n_steps++];
    memset(st, 0, sizeof *st);
    st->start_ns = s;
    st->end_ns = e;
    return 0;
}

static int steps_from_ranges(tsa_rank *r, const char *needle, int prefix, size_t *cap)
{
    for (size_t i = 0; i < r->n_ranges; i++) {
        const char *name = tsa_rank_string(r, r->ranges[i].name);
        int hit = prefix ? !strncmp(name, needle, strlen(needle)) : strstr(name, needle) != NULL;
        if (hit && tsa_step_append(r, cap, r->ranges[i].start_ns, r->ranges[i].end_ns))
            return -1;
    }
    return 0;
}

/* A marker starts each step: step k = [start of marker k, start of marker
 * k+1), kernels or ranges alike (the last marker only ends a step). */
static int steps_from_kernels(tsa_rank *r, const char *needle, size_t *cap)
{
    int64_t prev = INT64_MIN;
    for (size_t i = 0; i < r->n_kernels; i++) {
        if (!strstr(tsa_rank_string(r, r->kernels[i].name), needle))
            continue;
        if (prev != INT64_MIN && tsa_step_append(r, cap, prev, r->kernels[i].start_ns))
            return -1;
        prev = r->kernels[i].start_ns;
    }
    return 0;
}

/* End of the patterned calls [from, to) of idx: the latest end among them
 * and the unpatterned calls up to the next patterned one (the GroupEnd
 * that completes a group of sends and receives). */
static int64_t cycle_end(const tsa_rank *r, const size_t *idx, size_t from, size_t to,
                         size_t n_all)
{
    size_t stop = to < n_all ? idx[to] : r->n_nccl;
    int64_t end = 0;
    for (size_t j = idx[from]; j < stop; j++) {
        const tsa_nccl_op *op = &r->nccl[j];
        if (j > idx[to - 1] && op->op != TSC_NCCL_GROUP_END)
            break;
        int64_t e = patterned(op) ? op->gpu_end_ns : op->end_ns;
        if (e > end)
            end = e;
    }
    return end;
}

/* Steps cut from a collective pattern stand only when the repetition is
 * what a training loop looks like (issue 38): the cycles but the first
 * take about the same time (coefficient of variation of their lengths at
 * most 0.5) and
 * together cover most (at least half) of the rank's GPU activity.  A
 * single forward pass whose layers each issue the same all-reduce repeats
 * too, but its "cycles" are one layer each, with the start-up in the
 * first and a long tail (a final all-gather) outside all of them. */
#define TSA_COLL_STEPS_MAX_CV 0.5
#define TSA_COLL_STEPS_MIN_COVER 0.5

static void work_in(int64_t s, int64_t e, int64_t s0, int64_t s1, double *in, double *all)
{
    if (e <= s)
        return;
    *all += (double)(e - s);
    int64_t a = s > s0 ? s : s0, b = e < s1 ? e : s1;
    if (b > a)
        *in += (double)(b - a);
}

static int collective_steps_regular(const tsa_rank *r, size_t from)
{
    size_t n = r->n_steps - from;
    if (n < 2)
        return 0;
    /* The first cycle also holds whatever ran before the loop (start-up):
     * the regularity is that of the others. */
    double sum = 0, sq = 0, cover = 0;
    for (size_t i = from + 1; i < r->n_steps; i++) {
        double d = (double)(r->steps[i].end_ns - r->steps[i].start_ns);
        sum += d;
        sq += d * d;
    }
    double mean = sum / (double)(n - 1), var = sq / (double)(n - 1) - mean * mean;
    double cv = mean > 0 ? sqrt(var > 0 ? var : 0) / mean : 0;
    /* Cover: the share of the rank's GPU work (kernels and copies; NCCL
     * calls without GPU records) that lies inside the steps, so idle time
     * before the loop does not count against it, a long tail does. */
    int64_t s0 = r->steps[from].start_ns, s1 = r->steps[r->n_steps - 1].end_ns;
    double in = 0, all = 0;
    for (size_t i = 0; i < r->n_kernels; i++)
        work_in(r->kernels[i].start_ns, r->kernels[i].end_ns, s0, s1, &in, &all);
    for (size_t i = 0; i < r->n_copies; i++)
        work_in(r->copies[i].start_ns, r->copies[i].end_ns, s0, s1, &in, &all);
    for (size_t i = 0; !r->n_kernels && !r->n_copies && i < r->n_nccl; i++)
        work_in(r->nccl[i].start_ns, r->nccl[i].end_ns, s0, s1, &in, &all);
    cover = all > 0 ? in / all : 1;
    return cv <= TSA_COLL_STEPS_MAX_CV && cover >= TSA_COLL_STEPS_MIN_COVER;
}

static int steps_from_collectives(tsa_rank *r, size_t *cap)
{
    size_t n = 0;
    for (size_t i = 0; i < r->n_nccl; i++)
        n += patterned(&r->nccl[i]);
    if (n < 2)
        return 0;
    uint64_t *sig = malloc(n * sizeof *sig);
    size_t *idx = malloc(n * sizeof *idx);
    if (!sig || !idx) {
        free(sig);
        free(idx);
        return -1;
    }
    n = 0;
    for (size_t i = 0; i < r->n_nccl; i++)
        if (patterned(&r->nccl[i])) {
            sig[n] = signature(&r->nccl[i]);
            idx[n++] = i;
        }
    /* The middle half is past start-up (parameter broadcasts, barriers)
     * and before shut-down (final reductions): find the period there, then
     * extend the periodic region both ways. */
    size_t lo = n / 4, hi = n - n / 4;
    size_t p = tsa_sequence_period(sig + lo, hi - lo);
    int rc = 0;
    if (p == 0 || (hi - lo) / p < 2) {
        /* A short run: try the whole sequence without up to 64 calls at
         * either end (bounded so a pattern-less long run stays linear). */
        size_t max_cut = n / 2 < 64 ? n / 2 : 64;
        int found = 0;
        for (size_t a = 0; a <= max_cut && !found && n <= 4096; a++)
            for (size_t b = 0; b <= max_cut && a + b < n; b++) {
                p = tsa_sequence_period(sig + a, n - a - b);
                if (p && (n - a - b) / p >= 2) {
                    lo = a;
                    hi = n - b;
                    found = 1;
                    break;
                }
            }
        if (!found)
            goto done;
    }
    size_t begin = lo;
    while (begin > 0 && sig[begin - 1] == sig[begin - 1 + p])
        begin--;
    while (hi < n && sig[hi] == sig[hi - p])
        hi++;
    size_t n_all = n;
    n = hi; /* calls after the pattern belong to no step */
    /* Rotation: a training loop starts with its first step, so the cycle
     * normally starts where the periodic region does; another position
     * wins only when the pause before it is clearly the longest (more than
     * twice the first one's) and the rotation keeps every whole cycle, e.g.
     * when start-up calls happen to look like the end of a step. */
    double *gap = calloc(p, sizeof *gap);
    if (!gap) {
        rc = -1;
        goto done;
    }
    for (size_t j = 0; j < p; j++) {
        double sum = 0;
        size_t cnt = 0;
        for (size_t i = begin + j; i < n; i += p) {
            if (i == 0)
                continue;
            /* Time outside NCCL before call i: blocking GroupEnd calls in
             * between count as communication, not as a pause. */
            int64_t prev_end = r->nccl[idx[i - 1]].gpu_end_ns;
            for (size_t k = idx[i - 1] + 1; k < idx[i]; k++)
                if (r->nccl[k].end_ns > prev_end)
                    prev_end = r->nccl[k].end_ns;
            sum += (double)(r->nccl[idx[i]].gpu_start_ns - prev_end);
            cnt++;
        }
        gap[j] = cnt ? sum / (double)cnt : -1;
    }
    /* A rotation by j costs a whole cycle unless the region has at least j
     * calls beyond its whole cycles: a long pause (host work after some
     * collectives, e.g. checks) must not drop a step the loop really ran. */
    size_t spare = (n - begin) % p;
    size_t best = 0;
    for (size_t j = 1; j <= spare; j++)
        if (gap[j] > 2 * gap[0] && gap[j] > gap[best])
            best = j;
    free(gap);
    /* Cycle c spans positions [first + c*p, first + (c+1)*p); its step runs
     * from the end of the previous call to the end of its last call. */
    size_t first = begin + best;
    int64_t prev_end = first > 0 ? cycle_end(r, idx, first - 1, first, n_all) : r->first_ns;
    for (size_t s = first; s + p <= n; s += p) {
        int64_t end = cycle_end(r, idx, s, s + p, n_all);
        if (tsa_step_append(r, cap, prev_end, end)) {
            rc = -1;
            break;
        }
        prev_end = end;
    }
    if (!rc && !collective_steps_regular(r, 0))
        r->n_steps = 0; /* a pattern, but not a loop's: no steps */
done:
    free(sig);
    free(idx);
    return rc;
}

static int autograd_tid(const tsa_rank *r, const uint32_t *tids, size_t n, uint32_t tid)
{
    (void)r;
    for (size_t i = 0; i < n; i++)
        if (tids[i] == tid)
            return 1;
    return 0;
}

/* Single-process jobs without collectives or NVTX: PyTorch runs backward
 * on its autograd device threads ("pt_autograd_<dev>") and forward on the
 * caller's thread, so a step starts at the first kernel launched outside
 * the autograd threads after kernels launched from them.  Only steps whose
 * backward was seen are complete: the run's last segment counts when it has
 * backward kernels. */
static int steps_from_autograd_cycle(tsa_rank *r, size_t *cap)
{
    uint32_t tids[64];
    size_t nt = 0;
    for (size_t i = 0; i < r->n_threads && nt < 64; i++)
        if (!strncmp(tsa_rank_string(r, r->threads[i].name), "pt_autograd", 11))
            tids[nt++] = r->threads[i].tid;
    if (!nt)
        return 0;
    int64_t start = INT64_MIN, last_end = 0;
    int seen_bwd = 0;
    for (size_t i = 0; i < r->n_kernels; i++) {
        const tsa_kernel *k = &r->kernels[i];
        if (!k->launch_tid || k->category == TSA_KCAT_COMM)
            continue;
        int bwd = autograd_tid(r, tids, nt, k->launch_tid);
        if (bwd) {
            seen_bwd = 1;
        } else if (k->category != TSA_KCAT_OPTIMIZER) {
            if (start == INT64_MIN) {
                start = k->start_ns;
            } else if (seen_bwd) {
                if (tsa_step_append(r, cap, start, k->start_ns))
                    return -1;
                start = k->start_ns;
                seen_bwd = 0;
            }
        }
        if (k->end_ns > last_end)
            last_end = k->end_ns;
    }
    if (start != INT64_MIN && seen_bwd && tsa_step_append(r, cap, start, last_end))
        return -1;
    if (r->n_steps < 2) {
        r->n_steps = 0; /* one "step" is no evidence of a cycle */
        return 0;
    }
    return 0;
}

/* A loop's repeated top-level call: a step from each start to the next. */
static int steps_from_top_call(tsa_rank *r, size_t *cap)
{
    int64_t *starts;
    size_t n;
    if (tsa_top_call_starts(r, &starts, &n))
        return -1;
    int rc = 0;
    for (size_t k = 1; k < n && !rc; k++)
        rc = tsa_step_append(r, cap, starts[k - 1], starts[k]);
    free(starts);
    return rc;
}

/* Attach each step's NCCL calls (those starting inside it). */
static void attach_nccl(tsa_rank *r)
{
    size_t j = 0;
    for (size_t s = 0; s < r->n_steps; s++) {
        tsa_step *st = &r->steps[s];
        while (j < r->n_nccl && r->nccl[j].start_ns < st->start_ns)
            j++;
        st->first_nccl = j;
        size_t k = j;
        while (k < r->n_nccl && r->nccl[k].start_ns < st->end_ns)
            k++;
        st->n_nccl = k - j;
    }
}

int tsa_find_steps(tsa_rank *r, const char *marker, tsa_step_method *method)
{
    free(r->steps);
    r->steps = NULL;
    r->n_steps = 0;
    size_t cap = 0;
    *method = TSA_STEPS_NONE;
    if (marker && *marker) {
        if (tsa_steps_from_range_starts(r, marker, 0, &cap))
            return -1;
        if (!r->n_steps && steps_from_kernels(r, marker, &cap))
            return -1;
        if (r->n_steps)
            *method = TSA_STEPS_MARKER;
    }
    if (!r->n_steps) {
        if (steps_from_ranges(r, "ProfilerStep#", 1, &cap))
            return -1;
        if (r->n_steps)
            *method = TSA_STEPS_NVTX;
    }
    /* Traces without ProfilerStep: the loop's own calls mark iterations. */
    if (!r->n_steps) {
        if (tsa_steps_from_range_starts(r, "__next__", 0, &cap))
            return -1;
        if (r->n_steps)
            *method = TSA_STEPS_DATALOADER;
    }
    if (!r->n_steps) {
        if (tsa_steps_from_range_starts(r, "Optimizer.step#", 1, &cap))
            return -1;
        if (r->n_steps)
            *method = TSA_STEPS_OPTIMIZER;
    }
    if (!r->n_steps) {
        if (steps_from_collectives(r, &cap))
            return -1;
        if (r->n_steps)
            *method = TSA_STEPS_COLLECTIVES;
    }
    if (!r->n_steps) {
        if (steps_from_autograd_cycle(r, &cap))
            return -1;
        if (r->n_steps)
            *method = TSA_STEPS_AUTOGRAD;
    }
    if (!r->n_steps) {
        if (steps_from_top_call(r, &cap))
            return -1;
        if (r->n_steps)
            *method = TSA_STEPS_TOP_CALL;
    }
    if (!r->n_steps) {
        /* No step markers: one step over the GPU records' span (the host's
         * time before the first kernel, e.g. model loading, is no data
         * stall), or over every record of a host-only input. */
        int64_t s = r->first_ns, e = r->last_ns;
        tsa_rank_gpu_span(r, &s, &e);
        if (e > s && tsa_step_append(r, &cap, s, e))
            return -1;
    }
    attach_nccl(r);
    return 0;
}

/* Steps from the starts of a repeated marker: the marker opens each
 * iteration, so step k runs from marker k's start to marker k+1's.  Used
 * for --step-marker ranges and for the calls that mark iterations in a
 * torch.profiler trace without ProfilerStep (DataLoader __next__,
 * Optimizer.step).  Markers nested in one another (a marker inside
 * another's span on the same thread) count once. */
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
