/* The cross-rank findings (DIST.*); docs/findings.md explains each.
 * Severity follows the share of the job's wall time a fix could win back:
 * >= 10% critical, >= 1% warning, else info. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/fmt_duration.h"
#include "xr_internal.h"

#define SKEW_FLOOR_NS 100000   /* 100 us: below this, skew does not matter */

static tsa_severity severity_of(int64_t saved_ns, int64_t wall_ns)
{
    double f = wall_ns > 0 ? (double)saved_ns / (double)wall_ns : 0;
    if (f >= 0.10)
        return TSA_SEV_CRITICAL;
    if (f >= 0.01)
        return TSA_SEV_WARNING;
    return TSA_SEV_INFO;
}

static double sec(int64_t ns)
{
    return (double)ns / 1e9;
}

/* "3, 4, 7-9, 12" into buf, trimmed with "..." when long. */
static void step_list(char *buf, size_t len, const uint32_t *s, size_t n)
{
    size_t at = 0;
    buf[0] = 0;
    for (size_t i = 0; i < n; i++) {
        size_t j = i;
        while (j + 1 < n && s[j + 1] == s[j] + 1)
            j++;
        char item[48];
        if (j > i)
            snprintf(item, sizeof item, "%s%u-%u", i ? ", " : "", s[i], s[j]);
        else
            snprintf(item, sizeof item, "%s%u", i ? ", " : "", s[i]);
        if (at + strlen(item) + 5 >= len) {
            snprintf(buf + at, len - at, ", ...");
            return;
        }
        at += (size_t)snprintf(buf + at, len - at, "%s", item);
        i = j;
    }
}

/* Median over instances of (latest - earliest arrival): how far apart
 * ranks normally arrive, the scale clock errors are judged against. */
static int64_t arrival_spread(const xr_ctx *c)
{
    size_t n = 0;
    int64_t *v = malloc((c->n_inst ? c->n_inst : 1) * sizeof *v);
    xr_member *ms = xr_scratch_members(c);
    if (!v || !ms) {
        free(v);
        free(ms);
        return 0;
    }
    for (size_t k = 0; k < c->n_inst; k++) {
        const xr_instance *in = &c->inst[k];
        if (!in->usable)
            continue;
        xr_members(c, in, ms);
        int64_t lo = in->latest;
        for (uint32_t j = 0; j < in->n; j++)
            if (ms[j].arrive < lo)
                lo = ms[j].arrive;
        v[n++] = in->latest - lo;
    }
    int64_t med = xr_median_i64(v, n);
    free(v);
    free(ms);
    return med;
}

/* A saving in readable units ("1.74 s", "830 us"): never "0.00 s". */
typedef struct dur_text {
    char s[32];
} dur_text;

static dur_text dur(int64_t ns)
{
    dur_text t;
    tsa_fmt_duration(t.s, sizeof t.s, (double)ns);
    return t;
}

/* "Persistent" takes a few steps to say: below that, the finding says how
 * few it saw. */
#define XR_PERSISTENT_STEPS 3

static void straggler_finding(const tsa_xrank_result *r, tsa_findings *f)
{
    const tsa_straggler *st = r->straggler;
    if (!st || st->intermittent)
        return;
    const tsa_rank_blame *b = NULL;
    for (size_t i = 0; i < r->n_ranks; i++)
        if (r->ranks[i].rank == st->rank)
            b = &r->ranks[i];
    tsa_severity sev = severity_of(st->whatif_saved_ns, r->job_wall_ns);
    if (sev < TSA_SEV_WARNING)
        sev = TSA_SEV_WARNING;
    double last = b && b->steps ? 100.0 * (double)b->steps_last / (double)r->steps : 0;
    tsa_finding *x = tsa_findings_add(f, "DIST.STRAGGLER", sev, sec(st->whatif_saved_ns), st->rank,
        "Look at this rank's host first: GPU clocks and throttling (nvidia-smi -q -d "
        "PERFORMANCE,CLOCK), its input pipeline (DataLoader workers, local disk), CPU "
        "affinity/NUMA and other processes on the node; if it stays slow, drain the node.",
        "rank %d%s%s%s is a %s: %.1f%% slower than the median rank, "
        "the latest to arrive in %.0f%% of steps (z=%.1f); running at the median speed "
        "would save %s (%s per step)",
        st->rank, st->host ? " (" : "", st->host ? st->host : "", st->host ? ")" : "",
        r->steps >= XR_PERSISTENT_STEPS ? "persistent straggler"
                                        : "straggler (in the few steps traced)",
        100.0 * st->slowdown, last, st->z, dur(st->whatif_saved_ns).s,
        dur(st->whatif_step_saved_ns).s);
    tsa_finding_evidence(x, "work per step of each of %zu ranks over %llu steps (the time "
                            "before each collective), against the median rank's",
                         r->n_ranks, (unsigned long long)r->steps);
    tsa_finding_evidence(x, "arrival order at the collectives (common clock): the latest in "
                            "%.0f%% of steps", last);
    tsa_finding_evidence(x, "the saving: the cross-rank what-if with this rank's work at the "
                            "median");
    tsa_finding_number(x, "slowdown", st->slowdown);
    tsa_finding_number(x, "z", st->z);
    tsa_finding_number(x, "steps_last_share", last / 100.0);
    tsa_finding_number(x, "wall_lost_s", sec(st->wall_lost_ns));
    tsa_finding_number(x, "blame_s", b ? sec(b->blame_ns) : 0);
    tsa_finding_number(x, "whatif_saved_s", sec(st->whatif_saved_ns));
    tsa_finding_number(x, "whatif_step_saved_s", sec(st->whatif_step_saved_ns));
}

static void imbalance_finding(const tsa_xrank_result *r, tsa_findings *f)
{
    if (!r->imbalance)
        return;
    char list[256];
    size_t at = 0;
    list[0] = 0;
    for (size_t i = 0; i < r->n_imbalanced && at + 16 < sizeof list; i++)
        at += (size_t)snprintf(list + at, sizeof list - at, "%s%d", i ? ", " : "",
                               r->imbalanced_ranks[i]);
    if (at + 16 >= sizeof list)
        snprintf(list + at, sizeof list - at, ", ...");
    tsa_finding *x = tsa_findings_add(f, "DIST.IMBALANCE",
        severity_of(r->imbalance_saved_ns, r->job_wall_ns), sec(r->imbalance_saved_ns), -1,
        "Even out the work per rank: balance tokens per rank rather than samples "
        "(packing, length-grouped batching), check uneven sharding or pipeline stages; "
        "if the slow ranks share hardware, test that hardware.",
        "load imbalance: %zu ranks are %s%.1f%% (median) slower than the "
        "median rank (ranks %s); at the median speed the job would save %s",
        r->n_imbalanced, r->steps >= XR_PERSISTENT_STEPS ? "persistently " : "",
        100.0 * r->imbalance_slowdown, list, dur(r->imbalance_saved_ns).s);
    tsa_finding_evidence(x, "work per step of each of %zu ranks over %llu steps (the time before "
                            "each collective), against the median rank's", r->n_ranks,
                         (unsigned long long)r->steps);
    tsa_finding_evidence(x, "ranks slower than the median beyond the noise: %zu, %.1f%% slower "
                            "(median of them)", r->n_imbalanced, 100.0 * r->imbalance_slowdown);
    tsa_finding_evidence(x, "the saving: the cross-rank what-if with those ranks' work at the "
                            "median");
    tsa_finding_number(x, "ranks", (double)r->n_imbalanced);
    tsa_finding_number(x, "slowdown", r->imbalance_slowdown);
    tsa_finding_number(x, "whatif_saved_s", sec(r->imbalance_saved_ns));
}

static void slow_host_finding(const tsa_xrank_result *r, tsa_findings *f)
{
    if (!r->slow_host)
        return;
    tsa_finding *x = tsa_findings_add(f, "DIST.SLOW_HOST",
        severity_of(r->slow_host_saved_ns, r->job_wall_ns), sec(r->slow_host_saved_ns),
        r->n_slow_host_ranks ? r->slow_host_ranks[0] : -1,
        "Check that host: GPU clocks and power/thermal throttling, PCIe/NVLink errors "
        "(nvidia-smi -q, dmesg), CPU frequency governor, other jobs on it; drain it "
        "and rerun to confirm.",
        "host %s is slow: all its %zu ranks are %.1f%% slower than the median rank; "
        "at the median speed the job would save %s",
        r->slow_host, r->n_slow_host_ranks, 100.0 * r->slow_host_slowdown,
        dur(r->slow_host_saved_ns).s);
    tsa_finding_evidence(x, "host names the dumps record per rank: all %zu ranks of host %s are "
                            "%.1f%% slower than the median rank", r->n_slow_host_ranks,
                         r->slow_host, 100.0 * r->slow_host_slowdown);
    tsa_finding_evidence(x, "work per step of each of %zu ranks over %llu steps, against the "
                            "median rank's", r->n_ranks, (unsigned long long)r->steps);
    tsa_finding_evidence(x, "the saving: the cross-rank what-if with that host's ranks at the "
                            "median");
    tsa_finding_number(x, "ranks", (double)r->n_slow_host_ranks);
    tsa_finding_number(x, "slowdown", r->slow_host_slowdown);
    tsa_finding_number(x, "whatif_saved_s", sec(r->slow_host_saved_ns));
}

static void burst_findings(const tsa_xrank_result *r, tsa_findings *f)
{
    for (size_t i = 0; i < r->n_bursts; i++) {
        const tsa_xrank_burst *bu = &r->bursts[i];
        char steps[160];
        step_list(steps, sizeof steps, bu->slow_steps, bu->n_slow_steps);
        tsa_finding *x = tsa_findings_add(f, "DIST.INTERMITTENT",
            severity_of(bu->whatif_saved_ns, r->job_wall_ns), sec(bu->whatif_saved_ns),
            bu->rank,
            "Correlate the listed steps with what else ran on that rank's host: garbage "
            "collection, checkpoint or log writes, DataLoader worker restarts, other "
            "processes, thermal events; trace just those steps.",
            "rank %d%s%s%s is slow in bursts: %zu steps far beyond the noise (steps %s); "
            "they cost %s",
            bu->rank, bu->host ? " (" : "", bu->host ? bu->host : "", bu->host ? ")" : "",
            bu->n_slow_steps, steps, dur(bu->whatif_saved_ns).s);
        tsa_finding_evidence(x, "rank %d's work per step over %llu steps, against the median "
                                "rank's: %zu steps beyond the noise (z %.1f)", bu->rank,
                             (unsigned long long)r->steps, bu->n_slow_steps, bu->z);
        tsa_finding_evidence(x, "the saving: the cross-rank what-if with those steps at the "
                                "median");
        tsa_finding_number(x, "slow_steps", (double)bu->n_slow_steps);
        tsa_finding_number(x, "z", bu->z);
        tsa_finding_number(x, "whatif_saved_s", sec(bu->whatif_saved_ns));
    }
}

static void clock_findings(const xr_ctx *c, const tsa_xrank_result *r, tsa_findings *f)
{
    const char *fix = "Keep the hosts' clocks disciplined (chrony/NTP, or PTP) so the "
                      "cross-rank figures can be trusted; meanwhile read per-rank waits "
                      "and blame as approximate.";
    if (r->n_unaligned) {
        tsa_finding *x = tsa_findings_add(f, "DIST.CLOCK_SKEW", TSA_SEV_WARNING, 0, -1, fix,
            "%zu of %zu ranks share no symmetric collective with rank %d: their clocks "
            "could not be aligned", r->n_unaligned, r->n_ranks, r->clock_reference_rank);
        tsa_finding_evidence(x, "symmetric collectives each rank shares with rank %d: none for "
                                "%zu of %zu ranks", r->clock_reference_rank, r->n_unaligned,
                             r->n_ranks);
        tsa_finding_number(x, "unaligned_ranks", (double)r->n_unaligned);
    }
    int64_t spread = arrival_spread(c);
    if (r->clock_residual_ns > SKEW_FLOOR_NS && 4 * r->clock_residual_ns > spread) {
        tsa_finding *x = tsa_findings_add(f, "DIST.CLOCK_SKEW", TSA_SEV_WARNING, 0, -1, fix,
            "residual clock skew after alignment is %.0f us, against a typical arrival "
            "spread of %.0f us: who arrived last is uncertain",
            (double)r->clock_residual_ns / 1e3, (double)spread / 1e3);
        tsa_finding_evidence(x, "clock offsets aligned on the symmetric collectives: "
                                "residual %.0f us", (double)r->clock_residual_ns / 1e3);
        tsa_finding_evidence(x, "typical arrival spread at the collectives: %.0f us (the "
                                "residual counts above a quarter of it)", (double)spread / 1e3);
        tsa_finding_number(x, "residual_s", sec(r->clock_residual_ns));
        tsa_finding_number(x, "arrival_spread_s", sec(spread));
    }
}

void xr_emit_findings(const xr_ctx *c, const tsa_xrank_result *r, tsa_findings *f)
{
    straggler_finding(r, f);
    imbalance_finding(r, f);
    slow_host_finding(r, f);
    burst_findings(r, f);
    clock_findings(c, r, f);
}
