/* Per-rank figures for the cause pass.  Everything is per analysed step
 * over the rank's own analysis window, so ranks that ran the same steps
 * compare directly whatever their clock offsets. */
#include "cause_measure.h"
#include "load/rank_view.h"

#include <stdlib.h>
#include <string.h>

#include "crossrank/xr_internal.h"   /* medians */
#include "load/rank_strings.h"
#include "passes/group_share.h"
#include "tsc_format.h"
#include "util/hash.h"
#include "util/radix_sort.h"

static int is_compute(const tsa_kernel *k)
{
    return k->nccl < 0 && k->category != TSA_KCAT_COMM;
}

/* A kernel's signature: its name and launch shape.  A rank launches the
 * same few hundred kernels thousands of times, so each name is hashed once
 * (slot n_strings stands for every index out of range, which reads ""). */
typedef struct name_hashes {
    uint64_t *h;
    uint8_t *have;
    size_t n;
} name_hashes;

static uint64_t signature(const tsa_rank *r, name_hashes *nh, const tsa_kernel *k)
{
    size_t slot = k->name < nh->n ? k->name : nh->n;
    if (!nh->have[slot]) {
        const char *name = tsa_rank_string(r, k->name);
        nh->h[slot] = tsa_fnv1a(name, strlen(name));
        nh->have[slot] = 1;
    }
    uint32_t dims[6] = {k->grid[0], k->grid[1], k->grid[2], k->block[0], k->block[1], k->block[2]};
    return tsa_fnv1a_from(nh->h[slot], (const char *)dims, sizeof dims);
}

/* Signatures in ascending order with their counts and median durations:
 * the keys (signature, index into dur) sorted by signature in linear
 * time, then each signature's median selected among its durations. */
static int sig_medians(tsa_sort_key *keys, const int64_t *dur, size_t n, cm_rank *m)
{
    const uint64_t flip = UINT64_C(1) << 63; /* unsigned order as signed keys */
    for (size_t i = 0; i < n; i++)
        keys[i].key = (int64_t)((uint64_t)keys[i].key ^ flip);
    if (tsa_sort_keys(keys, n))
        return -1;
    size_t distinct = 0;
    for (size_t i = 0; i < n; i++)
        distinct += !i || keys[i].key != keys[i - 1].key;
    int64_t *ns = malloc(n * sizeof *ns);
    m->sigs = malloc(distinct * sizeof *m->sigs);
    if (!ns || !m->sigs) {
        free(ns);
        free(m->sigs);
        m->sigs = NULL;
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        ns[i] = dur[keys[i].idx];
    for (size_t i = 0; i < n;) {
        size_t e = i;
        while (e < n && keys[e].key == keys[i].key)
            e++;
        m->sigs[m->n_sigs++] = (cm_sig){(uint64_t)keys[i].key ^ flip, (uint32_t)(e - i),
                                        xr_kth_i64(ns + i, e - i, (e - i) / 2)};
        i = e;
    }
    free(ns);
    return 0;
}

/* Kernels in [w0, w1): signatures with their medians, counts, busy time
 * and the median gap the device sat idle between two of them. */
static int kernels(const tsa_rank *r, int64_t w0, int64_t w1, cm_rank *m, double steps)
{
    size_t n = 0;
    for (size_t k = 0; k < r->n_kernels; k++)
        if (is_compute(&r->kernels[k]) && r->kernels[k].start_ns >= w0 && r->kernels[k].start_ns < w1)
            n++;
    if (!n)
        return 0;
    tsa_sort_key *keys = malloc(n * sizeof *keys);
    int64_t *dur = malloc(n * sizeof *dur);
    int64_t *gaps = malloc(n * sizeof *gaps);
    name_hashes nh = {malloc((r->n_strings + 1) * sizeof *nh.h), calloc(r->n_strings + 1, 1),
                      r->n_strings};
    int rc = -1;
    if (!keys || !dur || !gaps || !nh.h || !nh.have)
        goto out;
    size_t j = 0, ng = 0, op = 0;
    int64_t busy = 0, reach = INT64_MIN, idle = 0;
    for (size_t k = 0; k < r->n_kernels; k++) {
        const tsa_kernel *kr = &r->kernels[k];
        if (!is_compute(kr) || kr->start_ns < w0 || kr->start_ns >= w1)
            continue;
        int64_t d = kr->end_ns > kr->start_ns ? kr->end_ns - kr->start_ns : 0;
        keys[j] = (tsa_sort_key){(int64_t)signature(r, &nh, kr), j};
        dur[j++] = d;
        busy += d;
        /* kernels are sorted by start: the gap is from the furthest end so
         * far; NCCL calls too, so one pointer finds a call inside it */
        if (reach != INT64_MIN) {
            int64_t g = kr->start_ns > reach ? kr->start_ns - reach : 0;
            gaps[ng++] = g;
            while (op < r->n_nccl && r->nccl[op].start_ns < reach)
                op++;
            if (g > 0 && !(op < r->n_nccl && r->nccl[op].start_ns < kr->start_ns))
                idle += g;
        }
        if (kr->end_ns > reach)
            reach = kr->end_ns;
    }
    if (sig_medians(keys, dur, n, m))
        goto out;
    m->kernels = n;
    m->kernels_step = (double)n / steps;
    m->busy_step_ns = (double)busy / steps;
    m->gap_median_ns = ng ? (double)xr_median_i64(gaps, ng) : 0;
    m->idle_step_ns = (double)idle / steps;
    rc = 0;
out:
    free(keys);
    free(dur);
    free(gaps);
    free(nh.h);
    free(nh.have);
    return rc;
}

/* The global rank that is rank `peer` of communicator `comm`: the rank
 * whose calls on that communicator carry that communicator rank.  A Recv
 * names its peer within its own communicator (a pipeline pair, a split
 * group), not in the world.  -1 when no loaded rank has it. */
static int32_t global_peer(const tsa_job *job, uint64_t comm, uint32_t peer)
{
    for (size_t i = 0; i < job->n_ranks; i++) {
        const tsa_rank *r = &job->ranks[i];
        tsa_call_iter it;
        if (tsa_call_iter_open(&it, r))
            return -1;  /* out of memory: the peer is not named */
        int found = 0;
        const tsa_nccl_op *o;
        while (!found && (o = tsa_call_iter_next(&it)))
            found = o->comm_id == comm ? 1 + (o->comm_rank == peer) : 0;
        tsa_call_iter_close(&it);
        if (found == 2)
            return r->rank;
    }
    return -1;
}

/* Bytes moved per step (copies and NCCL calls) and time in Recv calls,
 * by the rank received from (its global rank). */
static void traffic(const tsa_job *job, const tsa_rank *r, int64_t w0, int64_t w1, cm_rank *m,
                    double steps)
{
    uint64_t comm[CM_RECV_PEERS];
    double bytes = 0;
    for (size_t i = 0; i < r->n_copies; i++)
        if (r->copies[i].start_ns >= w0 && r->copies[i].start_ns < w1)
            bytes += (double)r->copies[i].bytes;
    double recv = 0;
    for (size_t i = 0; i < r->n_nccl; i++) {
        const tsa_nccl_op *op = &r->nccl[i];
        if (op->start_ns < w0 || op->start_ns >= w1)
            continue;
        bytes += (double)op->bytes;
        if (op->op != TSC_NCCL_RECV || op->end_ns <= op->start_ns)
            continue;
        double t = (double)(op->end_ns - op->start_ns);
        recv += t;
        size_t p = 0;
        while (p < m->n_recv_peers && (m->recv_peer[p] != op->peer || comm[p] != op->comm_id))
            p++;
        if (p == m->n_recv_peers) {
            if (p == CM_RECV_PEERS)
                continue;
            comm[p] = op->comm_id;
            m->recv_peer[m->n_recv_peers++] = op->peer;
            m->recv_peer_ns[p] = 0;
        }
        m->recv_peer_ns[p] += t;
    }
    /* to global ranks; one entry per rank (the world and a pair may both
     * receive from it) */
    size_t kept = 0;
    for (size_t p = 0; p < m->n_recv_peers; p++) {
        int32_t g = global_peer(job, comm[p], (uint32_t)m->recv_peer[p]);
        g = g >= 0 ? g : m->recv_peer[p];
        size_t k = 0;
        while (k < kept && m->recv_peer[k] != g)
            k++;
        if (k == kept) {
            m->recv_peer[kept] = g;
            m->recv_peer_ns[kept++] = m->recv_peer_ns[p];
        } else {
            m->recv_peer_ns[k] += m->recv_peer_ns[p];
        }
    }
    m->n_recv_peers = kept;
    /* most time first (a handful of entries) */
    for (size_t i = 1; i < m->n_recv_peers; i++)
        for (size_t k = i; k > 0 && m->recv_peer_ns[k] > m->recv_peer_ns[k - 1]; k--) {
            double t = m->recv_peer_ns[k];
            int32_t p = m->recv_peer[k];
            m->recv_peer_ns[k] = m->recv_peer_ns[k - 1];
            m->recv_peer[k] = m->recv_peer[k - 1];
            m->recv_peer_ns[k - 1] = t;
            m->recv_peer[k - 1] = p;
        }
    for (size_t i = 0; i < m->n_recv_peers; i++)
        m->recv_peer_ns[i] /= steps;
    m->bytes_step = bytes / steps;
    m->recv_step_ns = recv / steps;
}

/* Host-device copies, and the NCCL sends and receives with the time each
 * stands for (its own, or its share of the GroupEnd that ran it), per step:
 * the data a slow link or network port would slow down.  -1 on OOM. */
static int transfers(const tsa_rank *r, int64_t w0, int64_t w1, cm_rank *m, double steps)
{
    for (size_t i = 0; i < r->n_copies; i++) {
        const tsa_copy *cp = &r->copies[i];
        if (cp->start_ns < w0 || cp->start_ns >= w1 || cp->dir == TSA_COPY_MEMSET ||
            cp->end_ns <= cp->start_ns)
            continue;
        m->copy_step_ns += (double)(cp->end_ns - cp->start_ns);
        m->copy_bytes_step += (double)cp->bytes;
    }
    m->copy_step_ns /= steps;
    m->copy_bytes_step /= steps;
    if (!r->n_nccl)
        return 0;
    tsa_call_span *sp = tsa_call_spans(r);
    if (!sp)
        return -1;
    for (size_t i = 0; i < r->n_nccl; i++) {
        const tsa_nccl_op *op = &r->nccl[i];
        if ((op->op != TSC_NCCL_SEND && op->op != TSC_NCCL_RECV) || sp[i].skip ||
            op->start_ns < w0 || op->start_ns >= w1 || sp[i].end_ns <= sp[i].start_ns)
            continue;
        m->p2p_step_ns += (double)(sp[i].end_ns - sp[i].start_ns);
        m->p2p_bytes_step += (double)op->bytes;
    }
    free(sp);
    m->p2p_step_ns /= steps;
    m->p2p_bytes_step /= steps;
    return 0;
}

/* A counter's growth over the window per step, -1 when not recorded. */
static double per_step(const tsa_count_point *p, size_t n, int64_t w0, int64_t w1, int ticked,
                       double steps)
{
    double d = tsa_counter_delta(p, n, w0, w1, ticked);
    return d >= 0 ? d / steps : -1;
}

/* The main thread's CPU per step and the CPUs other busy threads took. */
static void host(const tsa_rank *r, int64_t w0, int64_t w1, cm_rank *m, double steps)
{
    m->switches_step = m->faults_step = -1;
    m->wait_step_ns = m->run_step_ns = m->throttled_step_ns = -1;
    m->cpu_stat = -1;
    const struct tsa_telemetry *tm = r->telemetry;
    if (tm) {
        int ticked = tsa_sampler_ticked(tm, w0, w1);
        m->switches_step = per_step(tm->switches, tm->n_switches, w0, w1, ticked, steps);
        m->faults_step = per_step(tm->faults, tm->n_faults, w0, w1, ticked, steps);
        m->wait_step_ns = per_step(tm->sched_wait, tm->n_sched_wait, w0, w1, ticked, steps);
        m->run_step_ns = per_step(tm->sched_run, tm->n_sched_run, w0, w1, ticked, steps);
        m->throttled_step_ns = per_step(tm->throttled, tm->n_throttled, w0, w1, ticked, steps);
        /* a cpu.stat that never moved is recorded once: no throttling, not
         * unknown, where the sampler ran in the window */
        if (m->throttled_step_ns < 0 && tm->cpu_stat == 1)
            m->throttled_step_ns = tm->n_throttled && ticked ? 0 : -1;
        m->cpu_stat = tm->cpu_stat;
    }
    tsa_cpu_window_of(r, w0, w1, &m->cpu);
    m->main_cpu_step_ns = -1;
    if (!m->cpu.have)
        return;
    double span = (double)(w1 - w0);
    for (size_t i = 0; i < m->cpu.n_top; i++) {
        const tsa_task_use *u = &m->cpu.top[i];
        if (u->role == TSC_TASK_MAIN)
            m->main_cpu_step_ns = u->cpus * span / steps;
        else if (u->role != TSC_TASK_NCCL && u->role != TSC_TASK_TSCOPE)
            m->stray_cpus += u->cpus;
    }
}

int cm_measure(const tsa_analysis *a, size_t i, const tsa_rank *r, cm_rank *m)
{
    memset(m, 0, sizeof *m);
    const tsa_rank_result *rr = &a->ranks[i];
    int64_t w0 = rr->window_start_ns, w1 = rr->window_end_ns;
    double steps = a->steps ? (double)a->steps : 1;
    m->main_cpu_step_ns = -1;
    m->switches_step = m->faults_step = -1;
    m->wait_step_ns = m->run_step_ns = m->throttled_step_ns = -1;
    m->cpu_stat = -1;
    if (w1 <= w0)
        return 0;
    if (kernels(r, w0, w1, m, steps) || transfers(r, w0, w1, m, steps))
        return -1;
    traffic(a->job, r, w0, w1, m, steps);
    host(r, w0, w1, m, steps);
    tsa_gpu_window_of(r, w0, w1, &m->gpu);
    tsa_net_window_of(r, w0, w1, &m->net);
    return 0;
}

void cm_free(cm_rank *m)
{
    free(m->sigs);
    m->sigs = NULL;
    m->n_sigs = 0;
}

int64_t cm_sig_median(const cm_rank *m, uint64_t sig)
{
    size_t lo = 0, hi = m->n_sigs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->sigs[mid].sig < sig)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < m->n_sigs && m->sigs[lo].sig == sig ? m->sigs[lo].median_ns : -1;
}
