/* Why the blamed ranks are slow.  The cross-rank pass says which rank (or
 * host) the others wait for and by how much its work per step exceeds the
 * median rank's; this pass splits that extra time among the causes the
 * records support, each measured against the same figure on its peers
 * (ranks not flagged slow) over the same analysed steps:
 *   device   the same kernel signatures run longer (GPU clocks, throttling)
 *   work     more kernels (or, without GPU records, more main-thread CPU)
 *   host     the same kernels with longer idle gaps between them, or, on
 *            the CPU, contention (busy stray threads, more runnable threads
 *            than CPUs, a tighter CPU limit)
 *   arrival  more time waiting in Recv for the ranks upstream
 * A cause is named when it explains a material share of the extra time;
 * none named is said plainly ("cause unknown") with what was checked.
 * docs/findings.md: the rules; docs/report.md: the output. */
#include "cause.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cause_contention.h"
#include "cause_health.h"
#include "cause_link.h"
#include "cause_measure.h"
#include "crossrank/xr_internal.h"   /* medians */
#include "load/rank_telemetry.h"
#include "whatif/whatif.h"

static const char *const fixes[TSA_CAUSE_KINDS] = {
    "Check the GPU's clocks, power cap and temperature (nvidia-smi -q -d "
    "PERFORMANCE,CLOCK,TEMPERATURE); if it stays slow, drain or swap the node",
    "Even out the work per rank: balance the data (bucket or pack sequences by length), "
    "the expert routing or the stage split",
    "Free the rank's CPUs: stop stray processes and threads, give it whole cores "
    "(affinity, cgroup quota), cut launch overhead (CUDA graphs, fused kernels)",
    "Look upstream: speed up the ranks it waits for first (stage balance, uneven groups)",
    "Test that link (ib_write_bw / nccl-tests between the pair), its NIC and cable counters "
    "(ibstat, ethtool -S); exclude the node if it persists",
    /* the GPU link, network and GPU health causes carry their own (cause_health.c) */
};

static double f_kernels(const cm_rank *m) { return m->kernels ? m->kernels_step : NAN; }
static double f_busy(const cm_rank *m) { return m->kernels ? m->busy_step_ns : NAN; }
static double f_gap(const cm_rank *m) { return m->kernels > 1 ? m->gap_median_ns : NAN; }
static double f_idle(const cm_rank *m) { return m->kernels > 1 ? m->idle_step_ns : NAN; }
static double f_bytes(const cm_rank *m) { return m->bytes_step; }
static double f_main_cpu(const cm_rank *m) { return m->main_cpu_step_ns >= 0 ? m->main_cpu_step_ns : NAN; }
static double f_stray(const cm_rank *m) { return m->cpu.have ? m->stray_cpus : NAN; }
static double f_runnable(const cm_rank *m) { return m->cpu.have ? m->cpu.runnable_mean : NAN; }
static double f_limit(const cm_rank *m) { return m->cpu.have && m->cpu.limit_cpus > 0 ? m->cpu.limit_cpus : NAN; }
static double f_switches(const cm_rank *m) { return m->switches_step >= 0 ? m->switches_step : NAN; }
static double f_faults(const cm_rank *m) { return m->faults_step >= 0 ? m->faults_step : NAN; }
static double f_clock(const cm_rank *m) { return m->gpu.have && m->gpu.sm_clock_mean > 0 ? m->gpu.sm_clock_mean : NAN; }
static double f_recv(const cm_rank *m) { return m->recv_step_ns; }

static void device(cause_ctx *c, const cm_rank *m, const size_t *peers, size_t np, candidate *out)
{
    double own_ns = 0, peer_ns = 0;
    size_t matched = 0, sigs = 0;
    for (size_t s = 0; s < m->n_sigs; s++) {
        size_t k = 0;
        for (size_t p = 0; p < np; p++) {
            int64_t x = cm_sig_median(&c->m[peers[p]], m->sigs[s].sig);
            if (x >= 0)
                c->scratch[k++] = (double)x;
        }
        if (!k)
            continue;
        double pm = xr_median_d(c->scratch, k);
        own_ns += (double)m->sigs[s].n * (double)m->sigs[s].median_ns;
        peer_ns += (double)m->sigs[s].n * pm;
        matched += m->sigs[s].n;
        sigs++;
    }
    double steps = c->a->steps ? (double)c->a->steps : 1;
    double clk = f_clock(m), peer_clk = median_of(c, peers, np, f_clock);
    int at = 0;
    if (matched && rel_above(own_ns, peer_ns)) {
        out->explained = (own_ns - peer_ns) / steps;
        out->metric = "compute_kernel_ns_per_step";
        out->own = own_ns / steps;
        out->peers = peer_ns / steps;
        at = snprintf(out->evidence, sizeof out->evidence,
                      "the same %.0f kernels per step (%zu signatures) run %.0f%% longer: "
                      "%.3f ms per step vs %.3f ms at its peers' medians",
                      (double)matched / steps, sigs, 100 * (own_ns / peer_ns - 1), out->own / 1e6,
                      out->peers / 1e6);
    } else if (!m->kernels && !isnan(clk) && !isnan(peer_clk) &&
               clk < peer_clk * (1 - TSA_TH_CAUSE_REL)) {
        /* No kernel records: the clock alone, as if the work were GPU-bound. */
        out->metric = "sm_clock_mhz";
        out->own = clk;
        out->peers = peer_clk;
        out->explained = -1;   /* set by the caller from the clock ratio */
        at = snprintf(out->evidence, sizeof out->evidence,
                      "no kernel records; its GPU ran %.0f%% slower clocks", 100 * (1 - clk / peer_clk));
    } else {
        return;
    }
    if (!isnan(clk) && !isnan(peer_clk) && at > 0 && (size_t)at < sizeof out->evidence)
        at += snprintf(out->evidence + at, sizeof out->evidence - (size_t)at,
                       "; SM clock %.0f vs %.0f MHz", clk, peer_clk);
    if (m->gpu.have && m->gpu.reasons && at > 0 && (size_t)at < sizeof out->evidence)
        at += snprintf(out->evidence + at, sizeof out->evidence - (size_t)at,
                       "; held down by %s for %.0f%% of the window",
                       tsa_throttle_cause(m->gpu.reasons), 100 * m->gpu.throttled_share);
    /* A narrower PCIe link than the slot allows (the generation alone also
     * drops at idle), and link-level retries. */
    const tsa_gpu_window *g = &m->gpu;
    if (g->have && g->pcie_width && g->pcie_width < g->pcie_width_max && at > 0 &&
        (size_t)at < sizeof out->evidence)
        at += snprintf(out->evidence + at, sizeof out->evidence - (size_t)at,
                       "; PCIe link down-trained to gen %u x%u of gen %u x%u", g->pcie_gen,
                       g->pcie_width, g->pcie_gen_max, g->pcie_width_max);
    if (g->have && g->pcie_replays_new && at > 0 && (size_t)at < sizeof out->evidence)
        at += snprintf(out->evidence + at, sizeof out->evidence - (size_t)at, "; %llu PCIe replays",
                       (unsigned long long)g->pcie_replays_new);
    if (g->have && g->xid_events && at > 0 && (size_t)at < sizeof out->evidence)
        snprintf(out->evidence + at, sizeof out->evidence - (size_t)at,
                 "; %llu XID event%s in the run, the last XID %llu",
                 (unsigned long long)g->xid_events, g->xid_events > 1 ? "s" : "",
                 (unsigned long long)g->xid_last);
}

static void work(cause_ctx *c, const cm_rank *m, const size_t *peers, size_t np,
                 const tsa_cause_block *b, candidate *out)
{
    double pk = median_of(c, peers, np, f_kernels), pb = median_of(c, peers, np, f_busy);
    double pbytes = median_of(c, peers, np, f_bytes);
    if (m->kernels && rel_above(m->kernels_step, pk) && pk > 0) {
        out->metric = "kernels_per_step";
        out->own = m->kernels_step;
        out->peers = pk;
        out->explained = (m->kernels_step - pk) * (pb / pk);
        snprintf(out->evidence, sizeof out->evidence,
                 "%.1f compute kernels per step vs %.1f on its peers (+%.0f%%, %.3f ms at their "
                 "mean kernel time); %.2f vs %.2f MB moved per step",
                 m->kernels_step, pk, 100 * (m->kernels_step / pk - 1), out->explained / 1e6,
                 m->bytes_step / 1e6, pbytes / 1e6);
        return;
    }
    /* Without GPU records the work is the main thread's CPU time.  The
     * extra must be material against the peers' step, not only against
     * their CPU time (a sleeping rank uses almost none); it costs wall
     * time at the pace the peers got CPU: each CPU millisecond plus the
     * run-queue wait that came with it (a busy machine stretches every
     * rank alike; the time a rank sleeps is no part of that pace). */
    double pcpu = median_of(c, peers, np, f_main_cpu), cpu = f_main_cpu(m);
    double pstep = (double)b->peer_step_ns, extra = (double)b->extra_ns;
    if (!m->kernels && !isnan(cpu) && pcpu > 0 && cpu > pcpu * (1 + TSA_TH_CAUSE_CPU_REL) &&
        cpu - pcpu >= TSA_TH_CAUSE_REL * pstep &&
        cpu >= TSA_TH_CAUSE_CPU_BOUND * (double)b->step_ns && pstep > 0 &&
        cpu / pcpu - 1 >= 0.5 * ((double)b->step_ns / pstep - 1)) {
        /* more work grows its CPU in proportion to its step (at least half
         * as much, relatively); a sleeping slowed rank's main thread was
         * seen using a little more CPU than its peers (its NCCL calls' CPU
         * is in the figure), which the pace would otherwise multiply into
         * most of a sleep it did not cause */
        double pace = cause_cpu_pace(c, peers, np);
        if (isnan(pace))   /* no run-queue wait recorded: the step's own pace, an upper bound */
            pace = pstep > pcpu ? pstep / pcpu : 1;
        out->metric = "main_thread_cpu_ns_per_step";
        out->own = cpu;
        out->peers = pcpu;
        out->explained = (cpu - pcpu) * pace;
        if (extra > 0 && out->explained > extra)
            out->explained = extra;
        snprintf(out->evidence, sizeof out->evidence,
                 "its main thread used %.2f ms of CPU per step vs %.2f ms on its peers (+%.0f%%; "
                 "%.2f ms of wall time per CPU ms on its peers)",
                 cpu / 1e6, pcpu / 1e6, 100 * (cpu / pcpu - 1), pace);
    }
}

/* Host figures appended to the host cause's evidence. */
static void host_cpu_words(cause_ctx *c, const cm_rank *m, const size_t *peers, size_t np,
                           char *buf, size_t cap)
{
    if (!m->cpu.have || !cap)
        return;
    int at = snprintf(buf, cap, "other busy threads %.2f vs %.2f CPUs; runnable threads %.1f vs %.1f "
                                "for %.1f CPUs",
                      m->stray_cpus, median_of(c, peers, np, f_stray), m->cpu.runnable_mean,
                      median_of(c, peers, np, f_runnable), m->cpu.limit_cpus);
    double cpu = f_main_cpu(m), pcpu = median_of(c, peers, np, f_main_cpu);
    if (!isnan(cpu) && !isnan(pcpu) && at > 0 && (size_t)at < cap)
        at += snprintf(buf + at, cap - (size_t)at, "; main thread CPU %.2f vs %.2f ms per step",
                       cpu / 1e6, pcpu / 1e6);
    double sw = f_switches(m), psw = median_of(c, peers, np, f_switches);
    if (!isnan(sw) && !isnan(psw) && at > 0 && (size_t)at < cap)
        at += snprintf(buf + at, cap - (size_t)at, "; main thread preempted %.1f vs %.1f times "
                       "per step", sw, psw);
    double pf = f_faults(m), ppf = median_of(c, peers, np, f_faults);
    if (!isnan(pf) && !isnan(ppf) && pf > 0 && at > 0 && (size_t)at < cap)
        at += snprintf(buf + at, cap - (size_t)at, "; major page faults %.1f vs %.1f per step",
                       pf, ppf);
    cause_contention_words(c, m, peers, np, buf, cap, &at);
}

/* Twice the peers' figure and at least `floor` more per step. */
static int clearly_above(double own, double peers, double floor)
{
    return !isnan(own) && !isnan(peers) && own >= 2 * peers && own - peers >= floor;
}

/* measured_ns: the most the causes measured directly (work, link,
 * network) explain; a host cause seen only as contention takes the rest. */
static void host(cause_ctx *c, const cm_rank *m, const size_t *peers, size_t np,
                 const tsa_cause_block *b, double measured_ns, candidate *out)
{
    char cpu[TSA_CAUSE_TEXT - 64] = "";
    host_cpu_words(c, m, peers, np, cpu, sizeof cpu);
    double pgap = median_of(c, peers, np, f_gap), pidle = median_of(c, peers, np, f_idle);
    if (m->kernels > 1) {
        /* The same kernels with the device idle longer between them: all
         * the idle time between its kernels (not the median gap, which a
         * few long stalls of a preempted thread would not move), leaving
         * out the gaps where it waited in an NCCL call. */
        double idle = m->idle_step_ns;
        if (!rel_above(idle, pidle) || idle - pidle < TSA_TH_CAUSE_REL * (double)b->peer_step_ns)
            return;
        out->metric = "kernel_idle_ns_per_step";
        out->own = idle;
        out->peers = pidle;
        out->explained = idle - pidle;
        snprintf(out->evidence, sizeof out->evidence,
                 "the device idles %.3f ms per step between its kernels vs %.3f ms on its peers "
                 "(median gap %.1f vs %.1f us, %.1f kernels per step)%s%s",
                 idle / 1e6, pidle / 1e6, m->gap_median_ns / 1e3, pgap / 1e3, m->kernels_step,
                 cpu[0] ? "; " : "", cpu);
        return;
    }
    /* CPU-only: its main thread waiting for a CPU, or its cgroup throttled,
     * beyond its peers measures contention and what it cost directly... */
    if (cause_contention(c, m, peers, np, b, out) || !m->cpu.have)
        return;
    /* ... else contention must be seen, then it takes what work did not explain. */
    double stray = m->stray_cpus, pstray = median_of(c, peers, np, f_stray);
    double run = m->cpu.runnable_mean, prun = median_of(c, peers, np, f_runnable);
    double lim = f_limit(m), plim = median_of(c, peers, np, f_limit);
    int stray_busy = !isnan(pstray) && stray - pstray >= 0.25;
    int crowded = !isnan(lim) && run > lim && !isnan(prun) && run - prun >= 0.5;
    int limited = !isnan(lim) && !isnan(plim) && lim < plim;
    /* Its main thread losing the CPU while runnable far more often than
     * the peers' (someone else runs on its cores), or waiting on pages
     * read from disk: contention the CPU figures above can miss. */
    double sw = f_switches(m), psw = median_of(c, peers, np, f_switches);
    double pf = f_faults(m), ppf = median_of(c, peers, np, f_faults);
    int preempted = clearly_above(sw, psw, 1), faulting = clearly_above(pf, ppf, 1);
    /* Where the run-queue wait is recorded it decides: busy threads, a
     * crowded run queue, a tighter limit or preemptions that did not make
     * the main thread wait for a CPU cost it nothing (a sleeping slowed
     * rank was preempted 6.2 vs 2.9 times a step and waited alike). */
    if (cause_contention_measured(c, m, peers, np))
        stray_busy = crowded = limited = preempted = 0;
    if (!stray_busy && !crowded && !limited && !preempted && !faulting)
        return;
    out->explained = (double)b->extra_ns - (measured_ns > 0 ? measured_ns : 0);
    out->metric = stray_busy ? "other_threads_cpus" : crowded ? "runnable_threads"
                  : limited  ? "cpu_limit" : preempted ? "involuntary_switches_per_step"
                             : "major_faults_per_step";
    out->own = stray_busy ? stray : crowded ? run : limited ? lim : preempted ? sw : pf;
    out->peers = stray_busy ? pstray : crowded ? prun : limited ? plim : preempted ? psw : ppf;
    snprintf(out->evidence, sizeof out->evidence, "CPU contention: %s", cpu);
}

static void arrival(cause_ctx *c, const cm_rank *m, const size_t *peers, size_t np, candidate *out)
{
    double pr = median_of(c, peers, np, f_recv);
    if (!m->n_recv_peers || !rel_above(m->recv_step_ns, pr))
        return;
    out->metric = "recv_ns_per_step";
    out->own = m->recv_step_ns;
    out->peers = pr;
    out->explained = m->recv_step_ns - pr;
    int at = snprintf(out->evidence, sizeof out->evidence,
                      "%.3f ms per step waiting in Recv vs %.3f ms on its peers; from",
                      m->recv_step_ns / 1e6, pr / 1e6);
    for (size_t i = 0; i < m->n_recv_peers && at > 0 && (size_t)at < sizeof out->evidence; i++)
        at += snprintf(out->evidence + at, sizeof out->evidence - (size_t)at, "%s rank %d (%.3f ms)",
                       i ? "," : "", m->recv_peer[i], m->recv_peer_ns[i] / 1e6);
}

static void checked_words(cause_ctx *c, size_t i, const cm_rank *m, size_t np,
                          tsa_cause_block *b)
{
    double steps = c->a->steps ? (double)c->a->steps : 1;
    int at = snprintf(b->checked, sizeof b->checked,
             "against %zu peers over %.0f steps: kernels by signature (%s), kernels and bytes per "
             "step, launch gaps, CPU samples (%s), NVML clocks (%s), Recv waits (%s); %s",
             np, steps, m->kernels ? "recorded" : "none recorded", m->cpu.have ? "recorded" : "none",
             m->gpu.have ? "recorded" : "none", m->n_recv_peers ? "recorded" : "none",
             m->switches_step >= 0 ? "involuntary context switches and major page faults "
                                     "(recorded)"
                                   : "not recorded: involuntary context switches");
    cause_words(b->checked, sizeof b->checked, &at, "; run-queue wait (%s), cgroup throttling (%s)",
                m->wait_step_ns >= 0 ? "recorded" : "not recorded",
                m->throttled_step_ns >= 0 ? "recorded"
                : m->cpu_stat == 0    ? "no cpu.stat found"
                                      : "not recorded");
    cause_health_checked(m, b->checked, sizeof b->checked, &at);
    cause_words(b->checked, sizeof b->checked, &at, "; NCCL links per peer (%s)",
                tsa_cause_link_recorded(c->a, i)
                    ? "recorded"
                    : "not recorded: TSCOPE_NCCL_PROFILER=full records them");
}

static int by_explained(const void *pa, const void *pb)
{
    const tsa_cause *a = pa, *b = pb;
    if (a->explained_ns != b->explained_ns)
        return a->explained_ns < b->explained_ns ? 1 : -1;
    return (a->kind > b->kind) - (a->kind < b->kind);
}

/* The rank's work per step outside collectives (less its sends and
 * receives for a pipeline stage's block: measured ranks only). */
static double f_step(const cause_ctx *c, size_t i)
{
    double w = (double)c->a->xrank.ranks[i].compute_median_ns;
    if (c->without_p2p && c->done[i] && c->m[i].p2p_step_ns < w)
        w -= c->m[i].p2p_step_ns;
    return w;
}

/* The causes of one member rank against the peers. */
static int rank_causes(cause_ctx *c, size_t i, const size_t *peers, size_t np, double extra,
                       tsa_cause_block *b)
{
    const cm_rank *m = measure(c, i);
    if (!m)
        return -1;
    candidate cand[TSA_CAUSE_KINDS];
    memset(cand, 0, sizeof cand);
    device(c, m, peers, np, &cand[TSA_CAUSE_DEVICE]);
    if (cand[TSA_CAUSE_DEVICE].explained < 0)   /* clock only: its share of the step */
        cand[TSA_CAUSE_DEVICE].explained =
            f_step(c, i) * (1 - cand[TSA_CAUSE_DEVICE].own / cand[TSA_CAUSE_DEVICE].peers);
    work(c, m, peers, np, b, &cand[TSA_CAUSE_WORK]);
    arrival(c, m, peers, np, &cand[TSA_CAUSE_ARRIVAL]);
    cause_health(c, m, peers, np, b, cand);
    double measured = fmax(cand[TSA_CAUSE_WORK].explained,
                           fmax(cand[TSA_CAUSE_GPU_LINK].explained, cand[TSA_CAUSE_NETWORK].explained));
    host(c, m, peers, np, b, measured, &cand[TSA_CAUSE_HOST]);
    checked_words(c, i, m, np, b);
    for (int k = 0; k < TSA_CAUSE_KINDS; k++) {
        const candidate *cd = &cand[k];
        if (!cd->evidence[0] || cd->explained < TSA_TH_CAUSE_SHARE * extra || cd->explained <= 0)
            continue;
        tsa_cause *cs = &b->causes[b->n_causes++];
        cs->kind = (tsa_cause_kind)k;
        cs->explained_ns = (int64_t)llround(cd->explained);
        cs->share = extra > 0 ? fmin(1, cd->explained / extra) : 1;
        cs->metric = cd->metric;
        cs->own = cd->own;
        cs->peers = cd->peers;
        memcpy(cs->evidence, cd->evidence, sizeof cs->evidence);
        cs->fix = cd->fix ? cd->fix : fixes[k];
    }
    /* A slow link the rank is on (its own file: cause_link.c). */
    tsa_cause link;
    int lk = tsa_cause_link(c->a, i, &link);
    if (lk < 0)
        return -1;
    if (lk && (double)link.explained_ns >= TSA_TH_CAUSE_SHARE * extra) {
        link.kind = TSA_CAUSE_LINK;
        link.share = extra > 0 ? fmin(1, (double)link.explained_ns / extra) : 1;
        link.fix = fixes[TSA_CAUSE_LINK];
        b->causes[b->n_causes++] = link;
    }
    qsort(b->causes, b->n_causes, sizeof *b->causes, by_explained);
    return 0;
}

/* Peers: ranks not flagged slow and not in the group, at most
 * TSA_CAUSE_PEERS_MAX of them spread over the rank order. */
static size_t pick_peers(const tsa_analysis *a, const size_t *group, size_t ng, size_t *out)
{
    size_t cand = 0;
    for (size_t i = 0; i < a->n_ranks; i++) {
        int in = a->xrank.ranks[i].slow || !a->xrank.ranks[i].steps;
        for (size_t g = 0; g < ng && !in; g++)
            in = group[g] == i;
        if (!in)
            out[cand++] = i;
    }
    if (cand <= TSA_CAUSE_PEERS_MAX)
        return cand;
    for (size_t k = 0; k < TSA_CAUSE_PEERS_MAX; k++)
        out[k] = out[k * cand / TSA_CAUSE_PEERS_MAX];
    return TSA_CAUSE_PEERS_MAX;
}

static int add_block(cause_ctx *c, const size_t *group, size_t ng, const char *as, int host_block,
                     size_t *peers)
{
    tsa_analysis *a = c->a;
    size_t np = pick_peers(a, group, ng, peers);
    if (!np)
        return 0;
    for (size_t p = 0; p < np; p++)
        if (!measure(c, peers[p]))
            return -1;
    for (size_t g = 0; g < ng && c->without_p2p; g++)
        if (!measure(c, group[g]))
            return -1;
    tsa_cause_result *r = &a->cause;
    tsa_cause_block *nb = realloc(r->blocks, (r->n_blocks + 1) * sizeof *nb);
    if (!nb)
        return -1;
    r->blocks = nb;
    tsa_cause_block *b = &nb[r->n_blocks];
    memset(b, 0, sizeof *b);
    b->blamed_as = as;
    b->peers = np;
    for (size_t g = 0; g < ng; g++)
        c->scratch[g] = f_step(c, group[g]);
    double own = xr_median_d(c->scratch, ng);
    for (size_t p = 0; p < np; p++)
        c->scratch[p] = f_step(c, peers[p]);
    double peer = xr_median_d(c->scratch, np);
    b->step_ns = (int64_t)llround(own);
    b->peer_step_ns = (int64_t)llround(peer);
    b->extra_ns = b->step_ns - b->peer_step_ns;
    /* A host or a pipeline stage: the causes of its median rank (the one
     * whose work per step is the group's median) stand for it. */
    size_t rep = group[0];
    for (size_t g = 0; g < ng; g++)
        if (fabs(f_step(c, group[g]) - own) < fabs(f_step(c, rep) - own))
            rep = group[g];
    b->rank = host_block ? -1 : a->job->ranks[rep].rank;
    b->host = a->job->ranks[rep].host;
    r->n_blocks++;
    return rank_causes(c, rep, peers, np, (double)b->extra_ns, b);
}

static size_t index_of(const tsa_analysis *a, int32_t rank)
{
    for (size_t i = 0; i < a->n_ranks; i++)
        if (a->job->ranks[i].rank == rank)
            return i;
    return a->n_ranks;
}

static int has_block(const tsa_cause_result *r, int32_t rank)
{
    for (size_t k = 0; k < r->n_blocks; k++)
        if (r->blocks[k].rank == rank)
            return 1;
    return 0;
}

/* A rank late because it waits in Recv (its first cause: arrival) points
 * at the rank it waits for most; that rank, when not blamed already, gets
 * a block of its own, so the report says why the upstream rank is slow
 * and not only that the downstream one waits. */
static int upstream_blocks(cause_ctx *c, size_t *group, size_t *peers)
{
    tsa_analysis *a = c->a;
    size_t n = a->cause.n_blocks;
    for (size_t k = 0; k < n; k++) {
        const tsa_cause_block *b = &a->cause.blocks[k];
        if (b->rank < 0 || !b->n_causes || b->causes[0].kind != TSA_CAUSE_ARRIVAL)
            continue;
        size_t i = index_of(a, b->rank);
        if (i == a->n_ranks || !c->done[i] || !c->m[i].n_recv_peers)
            continue;
        int32_t up = c->m[i].recv_peer[0];
        if (has_block(&a->cause, up) || (group[0] = index_of(a, up)) == a->n_ranks)
            continue;
        if (add_block(c, group, 1, "upstream of a late rank", 0, peers))
            return -1;
    }
    return 0;
}

/* On a pipeline the what-if's PIPE.SLOW_STAGE replaces the cross-rank
 * pass's late ranks: the slow stage gets one block (its median rank's
 * causes) against the ranks of the other stages, every step less its
 * sends and receives (which wait for the slow stage and would make it
 * look the fastest). */
static int stage_block(cause_ctx *c, size_t *group, size_t *peers)
{
    const tsa_pipe_result *p = c->a->pipe;
    if (!p || !p->pipeline || p->cls != TSA_PIPE_SLOW_STAGE)
        return 0;
    size_t ng = 0;
    for (size_t i = 0; i < p->n_ranks; i++)
        if (p->stage_of[i] == p->culprit &&
            (group[ng] = index_of(c->a, p->global_rank[i])) < c->a->n_ranks)
            ng++;
    c->without_p2p = 1;
    return ng ? add_block(c, group, ng, "slow pipeline stage", 0, peers) : 0;
}

int tsa_cause_run(tsa_analysis *a, const tsa_rank_runner *runner)
{
    memset(&a->cause, 0, sizeof a->cause);
    const tsa_xrank_result *x = &a->xrank;
    int slow_stage = a->pipe && a->pipe->pipeline && a->pipe->cls == TSA_PIPE_SLOW_STAGE;
    if (!a->have_xrank || a->n_ranks < 2 || x->n_ranks != a->n_ranks ||
        !(x->straggler || x->slow_host || x->n_imbalanced || slow_stage))
        return 0;
    /* tscope-report-mpi: a remote rank's kernels stay on the process that
     * loaded it, so its figures cannot be measured here; no cause rather
     * than one from half the records (docs/findings.md, "Limits").  The
     * streaming report reads the few ranks it measures again (hold). */
    for (size_t i = 0; i < a->n_ranks && !runner->hold; i++)
        if (a->job->ranks[i].remote)
            return 0;
    cause_ctx c = {.a = a, .runner = runner};
    c.m = calloc(a->n_ranks, sizeof *c.m);
    c.done = calloc(a->n_ranks, 1);
    c.scratch = malloc(a->n_ranks * sizeof *c.scratch);
    size_t *group = malloc(a->n_ranks * sizeof *group);
    size_t *peers = malloc(a->n_ranks * sizeof *peers);
    int rc = -1;
    if (!c.m || !c.done || !c.scratch || !group || !peers)
        goto out;
    if (x->straggler && (group[0] = index_of(a, x->straggler->rank)) < a->n_ranks &&
        add_block(&c, group, 1, x->straggler->intermittent ? "intermittent straggler" : "straggler",
                  0, peers))
        goto out;
    if (x->slow_host) {
        size_t ng = 0;
        for (size_t k = 0; k < x->n_slow_host_ranks; k++)
            if ((group[ng] = index_of(a, x->slow_host_ranks[k])) < a->n_ranks)
                ng++;
        if (ng && add_block(&c, group, ng, "slow host", 1, peers))
            goto out;
    }
    for (size_t k = 0; k < x->n_imbalanced; k++)
        if ((group[0] = index_of(a, x->imbalanced_ranks[k])) < a->n_ranks &&
            add_block(&c, group, 1, "imbalance", 0, peers))
            goto out;
    if (stage_block(&c, group, peers) || upstream_blocks(&c, group, peers))
        goto out;
    rc = 0;
out:
    for (size_t i = 0; c.m && i < a->n_ranks; i++)
        cm_free(&c.m[i]);
    free(c.m);
    free(c.done);
    free(c.scratch);
    free(group);
    free(peers);
    if (rc)
        tsa_cause_free(&a->cause);
    return rc;
}

void tsa_cause_free(tsa_cause_result *r)
{
    free(r->blocks);
    memset(r, 0, sizeof *r);
}
