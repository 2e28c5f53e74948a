/* NET.SLOW_LINK (netlink.h).  Every proxy operation of a sender says how
 * long its steps were on the wire to one peer over one channel; a link
 * that is slow makes every step over it slow, while scheduling noise hits
 * steps at random.  So each link's typical (median) step is compared with
 * its peers' (in a ring, the other hops of the same channel: a rank has
 * one peer each way, and every receive waits at the slow link's pace, so
 * only the senders' time on the wire tells the links apart), and a link is
 * named only when most of its operations are slow, its two ends are not
 * slow on their other links too (a slow host or NIC), and its sender's
 * proxy is not starved of CPU.  Advisory: the time it costs is already in
 * the communication lines the cross-rank findings attribute. */
#include "netlink.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load/comm_ranks.h"
#include "load/nprof_reduce.h"
#include "load/rank_nprof.h"
#include "util/vec.h"

typedef struct {
    int src, dst, ch, send;
    int owner;          /* the rank whose dump holds it */
    uint64_t comm_id;
    double per_step;
    uint64_t bytes, wire;
    uint64_t steps, gpu; /* its part's sums, with the part's first op */
} sample;

static int by_pair(const void *pa, const void *pb)
{
    const sample *a = pa, *b = pb;
    if (a->src != b->src)
        return a->src - b->src;
    if (a->dst != b->dst)
        return a->dst - b->dst;
    if (a->ch != b->ch)
        return a->ch - b->ch;
    if (a->comm_id != b->comm_id)
        return a->comm_id < b->comm_id ? -1 : 1;
    return (a->per_step > b->per_step) - (a->per_step < b->per_step);
}

static int by_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

static double median_of(double *v, size_t n)
{
    if (!n)
        return -1;
    qsort(v, n, sizeof *v, by_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One link part of rank r (load/nprof_lean.h) as a sample per proxy op;
 * the part's bytes and wire time go with its first (they are summed). */
static int add_part(const tsa_rank *r, const tsa_np_lean *l, const tsa_np_link_part *lp,
                    const tsa_comm_ranks *m, sample **out, size_t *n, size_t *cap)
{
    if (!lp->n_ops)
        return 0;
    if (lp->n_ops > SIZE_MAX / sizeof(uint64_t) ||
        tsa_vec_reserve((void **)out, cap, *n + (size_t)lp->n_ops, sizeof **out))
        return -1;
    uint32_t *steps = malloc((size_t)lp->n_ops * sizeof *steps);
    uint64_t *t = malloc((size_t)lp->n_ops * sizeof *t);
    int rc = steps && t ? tsa_np_link_ops(l, lp, steps, t) : -1;
    int peer = tsa_comm_rank_global(m, lp->comm_id, lp->peer);
    for (size_t k = 0; k < lp->n_ops && !rc; k++)
        (*out)[(*n)++] = (sample){.owner = r->rank, .src = lp->send ? r->rank : peer,
                                  .dst = lp->send ? peer : r->rank, .ch = lp->channel,
                                  .send = lp->send, .comm_id = lp->comm_id,
                                  .per_step = (double)t[k] / steps[k],
                                  .bytes = k ? 0 : lp->bytes, .wire = k ? 0 : lp->wire_ns,
                                  .steps = k ? 0 : lp->steps, .gpu = k ? 0 : lp->gpu_ns};
    free(steps);
    free(t);
    return rc;
}

static int collect(const tsa_job *job, sample **out, size_t *n)
{
    size_t cap = 0;
    tsa_comm_ranks m;
    if (tsa_comm_ranks_build(job, &m))
        return -1;
    *out = NULL;
    *n = 0;
    int rc = 0;
    for (size_t i = 0; i < job->n_ranks && !rc; i++) {
        const tsa_rank *r = &job->ranks[i];
        if (!r->nprof)
            continue;
        tsa_np_lean tmp;
        const tsa_np_lean *l = tsa_rank_np_lean(r, TSA_NPL_LINKS, &tmp);
        rc = l ? 0 : -1;
        for (size_t k = 0; l && k < l->n_links && !rc; k++)
            rc = add_part(r, l, &l->links[k], &m, out, n, &cap);
        tsa_np_lean_free(&tmp);
    }
    tsa_comm_ranks_free(&m);
    if (rc) {
        free(*out);
        *out = NULL;
        *n = 0;
    }
    return rc;
}

/* Median per step of the samples [b, e) of one direction. */
static double median_where(const sample *s, size_t b, size_t e, int send, double *tmp)
{
    size_t k = 0;
    for (size_t i = b; i < e; i++)
        if (s[i].send == send)
            tmp[k++] = s[i].per_step;
    return median_of(tmp, k);
}

/* The first quartile per step of the sends among samples [b, e). */
static double q1_of_sends(const sample *s, size_t b, size_t e, double *tmp)
{
    size_t k = 0;
    for (size_t i = b; i < e; i++)
        if (s[i].send)
            tmp[k++] = s[i].per_step;
    if (!k)
        return -1;
    qsort(tmp, k, sizeof *tmp, by_double);
    return tmp[(k - 1) / 4];
}

static int fill_link(const sample *s, size_t b, size_t e, double *tmp, tsa_link_stat *l)
{
    *l = (tsa_link_stat){.src = s[b].src, .dst = s[b].dst, .channel = s[b].ch,
                         .src_other_rel = -1, .dst_other_rel = -1, .src_gpu_rel = -1};
    size_t run = 0, best = 0;
    for (size_t i = b; i < e; i++) {
        run = i > b && s[i].comm_id == s[i - 1].comm_id ? run : 0;
        if (s[i].send) {
            l->ops++;
            l->bytes += s[i].bytes;
            l->wire_ns += s[i].wire;
            if (++run > best) { /* samples are sorted by communicator within a link */
                best = run;
                l->comm_id = s[i].comm_id;
            }
        }
    }
    if (!l->ops)
        return 0;
    l->step_ns_median = median_where(s, b, e, 1, tmp);
    l->step_ns_q1 = q1_of_sends(s, b, e, tmp);
    l->recv_wait_ns_median = median_where(s, b, e, 0, tmp);
    return 1;
}

/* Against its peers: the share of its operations above 1.5x their first
 * quartile. */
static void judge_link(const sample *s, size_t b, size_t e, tsa_link_stat *l)
{
    size_t above = 0;
    for (size_t i = b; i < e; i++)
        if (s[i].send && s[i].per_step > 1.5 * l->base_q1_ns)
            above++;
    l->consistent = l->ops ? (double)above / (double)l->ops : 0;
}

/* The median of the links' medians (q1: first quartiles) among those
 * that are k's peers: the other links of its communicator on its channel
 * when there are two or more (*peers 1), else all links but k. */
static double peers_median(const tsa_link_stat *l, size_t nl, size_t k, int q1, double *tmp,
                           int *peers)
{
    size_t m = 0;
    for (int pass = 0; pass < 2 && m < 2; pass++) {
        m = 0;
        for (size_t j = 0; j < nl; j++)
            if (j != k && (pass || (l[j].comm_id == l[k].comm_id &&
                                    l[j].channel == l[k].channel)))
                tmp[m++] = q1 ? l[j].step_ns_q1 : l[j].step_ns_median;
        *peers = !pass;
    }
    return median_of(tmp, m);
}

static void peer_bases(tsa_link_stat *l, size_t nl, double *tmp)
{
    for (size_t k = 0; k < nl; k++) {
        int peers;
        l[k].base_ns = peers_median(l, nl, k, 0, tmp, &peers);
        l[k].base_q1_ns = peers_median(l, nl, k, 1, tmp, &peers);
        l[k].peer_rel = l[k].base_q1_ns > 0 ? l[k].step_ns_q1 / l[k].base_q1_ns : -1;
    }
}

/* How slow rank x's other links are against their own peers, at the
 * median: those of other pairs than l's, either direction. */
static double other_links(const tsa_link_stat *all, size_t nl, const tsa_link_stat *l, int x,
                          double *tmp)
{
    size_t m = 0;
    for (size_t j = 0; j < nl; j++) {
        const tsa_link_stat *o = &all[j];
        int same_pair = (o->src == l->src && o->dst == l->dst) ||
                        (o->src == l->dst && o->dst == l->src);
        if (!same_pair && (o->src == x || o->dst == x) && o->peer_rel >= 0)
            tmp[m++] = o->peer_rel;
    }
    return median_of(tmp, m);
}

/* The end of the run of samples of one link starting at b. */
static size_t link_end(const sample *s, size_t ns, size_t b)
{
    size_t e = b + 1;
    while (e < ns && s[e].src == s[b].src && s[e].dst == s[b].dst && s[e].ch == s[b].ch)
        e++;
    return e;
}

static int by_owner(const void *pa, const void *pb)
{
    const sample *a = pa, *b = pb;
    return (a->owner > b->owner) - (a->owner < b->owner);
}

/* Per rank whose dump has receives: its steps' wait for the GPU, per
 * received step (the proxy polling the GPU's progress: a starved proxy is
 * late at it like everywhere).  s sorted by owner; owners and their
 * figures go to rk[] and gpu[], *n of them. */
static void gpu_waits(const sample *s, size_t ns, int *rk, double *gpu, size_t *n)
{
    *n = 0;
    for (size_t b = 0, e; b < ns; b = e) {
        uint64_t steps = 0, ns_sum = 0;
        for (e = b; e < ns && s[e].owner == s[b].owner; e++)
            if (!s[e].send) {
                steps += s[e].steps;
                ns_sum += s[e].gpu;
            }
        if (steps) {
            rk[*n] = s[b].owner;
            gpu[(*n)++] = (double)ns_sum / (double)steps;
        }
    }
}

/* A link against the other links of its two ends (a slow host or NIC is
 * slow on all of them), and its sender's wait for the GPU against the
 * median rank's (a starved proxy is late at everything). */
static void end_figures(sample *s, size_t ns, tsa_link_stat *l, size_t nl, double *tmp)
{
    for (size_t k = 0; k < nl; k++) {
        l[k].src_other_rel = other_links(l, nl, &l[k], l[k].src, tmp);
        l[k].dst_other_rel = other_links(l, nl, &l[k], l[k].dst, tmp);
    }
    qsort(s, ns, sizeof *s, by_owner);
    int *rk = malloc(sizeof *rk * ns);
    double *gpu = malloc(sizeof *gpu * ns);
    size_t n = 0;
    if (rk && gpu)
        gpu_waits(s, ns, rk, gpu, &n);
    for (size_t i = 0; i < n; i++)
        tmp[i] = gpu[i];
    double med = median_of(tmp, n);
    for (size_t k = 0; k < nl && med > 0; k++)
        for (size_t i = 0; i < n; i++)
            if (rk[i] == l[k].src) {
                l[k].src_gpu_rel = gpu[i] / med;
                l[k].src_gpu_excess_ns = gpu[i] - med;
            }
    free(rk);
    free(gpu);
}

int tsa_link_stats(const tsa_job *job, tsa_link_stat **out, size_t *n, double *median_ns)
{
    sample *s;
    size_t ns;
    *out = NULL;
    *n = 0;
    *median_ns = -1;
    if (collect(job, &s, &ns))
        return -1;
    if (!ns) { /* no proxy records (and qsort may not be given NULL) */
        free(s);
        *out = calloc(1, sizeof **out);
        return *out ? 0 : -1;
    }
    double *tmp = malloc(sizeof *tmp * (ns ? ns : 1));
    tsa_link_stat *l = malloc(sizeof *l * (ns ? ns : 1));
    if (!tmp || !l) {
        free(s), free(tmp), free(l);
        return -1;
    }
    qsort(s, ns, sizeof *s, by_pair);
    size_t nl = 0;
    for (size_t b = 0, e; b < ns; b = e) {
        e = link_end(s, ns, b);
        nl += fill_link(s, b, e, tmp, &l[nl]);
    }
    for (size_t i = 0; i < nl; i++)
        tmp[i] = l[i].step_ns_median;
    double med = median_of(tmp, nl);
    peer_bases(l, nl, tmp);
    for (size_t b = 0, e, k = 0; b < ns && nl; b = e) {
        e = link_end(s, ns, b);
        if (k < nl && l[k].src == s[b].src && l[k].dst == s[b].dst && l[k].channel == s[b].ch)
            judge_link(s, b, e, &l[k++]);
    }
    end_figures(s, ns, l, nl, tmp);
    free(s);
    free(tmp);
    *out = l;
    *n = nl;
    *median_ns = med;
    return 0;
}

/* A starved proxy is late at every state it records, by about as much
 * on its receives' wait for the GPU as on its sends' time on the wire:
 * starved when that wait is well above the median rank's and its excess
 * explains at least half of the link's. */
static int starved_sender(const tsa_link_stat *l)
{
    double link_excess = l->step_ns_q1 - l->base_q1_ns;
    return l->src_gpu_rel >= TSA_TH_LINK_STARVED &&
           l->src_gpu_excess_ns >= TSA_TH_LINK_ABS_NS &&
           l->src_gpu_excess_ns >= 0.5 * link_excess;
}

/* Slow against its peers, step after step; neither end slow on its other
 * links; its sender not late at everything its proxy does. */
static int is_slow(const tsa_link_stat *l)
{
    return l->peer_rel >= TSA_TH_LINK_RATIO &&
           l->step_ns_q1 - l->base_q1_ns >= TSA_TH_LINK_ABS_NS &&
           l->consistent >= TSA_TH_LINK_CONSISTENT &&
           l->src_other_rel < TSA_TH_LINK_END && l->dst_other_rel < TSA_TH_LINK_END &&
           !starved_sender(l);
}

/* The slow channels of one pair, [b, e) of the links, as one finding. */
typedef struct {
    char channels[128];
    size_t ops, links;
    double step_ns, base_ns, ratio, consistent;
    double mask;        /* bit c: channel c is slow */
    uint64_t bytes, wire;
} slow_pair;

static void sum_pair(const tsa_link_stat *l, size_t b, size_t e, slow_pair *p)
{
    size_t at = 0;
    *p = (slow_pair){.consistent = 1};
    for (size_t i = b; i < e; i++) {
        if (!is_slow(&l[i]))
            continue;
        if (at + 8 < sizeof p->channels)
            at += (size_t)snprintf(p->channels + at, sizeof p->channels - at, "%s%d",
                                   at ? "," : "", l[i].channel);
        p->links++;
        p->mask += l[i].channel < 53 ? (double)(1ull << l[i].channel) : 0;
        p->ops += l[i].ops;
        p->bytes += l[i].bytes;
        p->wire += l[i].wire_ns;
        if (l[i].peer_rel > p->ratio) {
            p->ratio = l[i].peer_rel;
            p->step_ns = l[i].step_ns_median;
            p->base_ns = l[i].base_ns;
        }
        if (l[i].consistent < p->consistent)
            p->consistent = l[i].consistent;
    }
}

/* Bytes over wire time in GB/s; NAN (unknown) without wire time. */
static double gbps_of(uint64_t bytes, uint64_t wire_ns)
{
    return wire_ns ? (double)bytes / (double)wire_ns : NAN;
}

double tsa_other_links_gbps(const tsa_link_stat *all, size_t n)
{
    uint64_t bytes = 0, wire = 0;
    for (size_t i = 0; i < n; i++)
        if (!is_slow(&all[i])) {
            bytes += all[i].bytes;
            wire += all[i].wire_ns;
        }
    return gbps_of(bytes, wire);
}

/* "1.234 GB/s", or "unknown GB/s" when not measured. */
static const char *gbps_text(char *buf, size_t cap, double gbps)
{
    if (isnan(gbps))
        snprintf(buf, cap, "unknown GB/s");
    else
        snprintf(buf, cap, "%.3f GB/s", gbps);
    return buf;
}

void tsa_netlink_cut_note(const tsa_analysis *a, char *buf, size_t len)
{
    const tsa_records_cut *c = &a->plugin_cut;
    if (len)
        buf[0] = 0;
    if (c->rank < 0)
        return;
    snprintf(buf, len,
             "proxy events end at +%.1f s on rank %d (own-cost budget, fewer NCCL plugin "
             "events): the evidence is the run before it%s",
             (double)(c->at_ns - c->run_start_ns) / 1e9, c->rank,
             c->resume_ns ? " and after the step back up" : "");
}

static int report(const tsa_analysis *a, const tsa_link_stat *first, const slow_pair *p,
                  double other, tsa_findings *out)
{
    double med = p->base_ns, ratio = p->ratio;
    double gbps = gbps_of(p->bytes, p->wire);
    char own_t[32], other_t[32];
    tsa_finding *f = tsa_findings_add(
        out, "NET.SLOW_LINK", ratio >= 3 ? TSA_SEV_WARNING : TSA_SEV_INFO, 0, first->src,
        "Test the link between the two ranks' hosts (ib_write_bw / nccl-tests between that "
        "pair), check the NIC and cable counters (ibstat, ethtool -S: symbol errors, link "
        "downgrades), and the PCIe link of the NIC; exclude the node if it persists",
        "link rank %d -> rank %d (channel%s %s) is %.1fx slower than the other links of its "
        "communicator on the same channel (first quartiles of their steps): %.0f us per "
        "network step on the wire vs %.0f us at the median, "
        "%s vs %s on the other links, slow in %.0f%% of its %zu proxy "
        "operations; neither rank is slow on its other links, and the sender's proxy is not "
        "starved of CPU",
        first->src, first->dst, strchr(p->channels, ',') ? "s" : "", p->channels, ratio,
        p->step_ns / 1e3, med / 1e3, gbps_text(own_t, sizeof own_t, gbps),
        gbps_text(other_t, sizeof other_t, other), 100 * p->consistent, p->ops);
    if (!f)
        return -1;
    tsa_finding_evidence(f, "NCCL profiler plugin's proxy steps (full capture): %zu operations "
                            "of rank %d to rank %d, %.0f us per step on the wire against %.0f us "
                            "for the other links of its communicator on channel%s %s, threshold "
                            "%.2fx",
                         p->ops, first->src, first->dst, p->step_ns / 1e3, med / 1e3,
                         strchr(p->channels, ',') ? "s" : "", p->channels,
                         (double)TSA_TH_LINK_RATIO);
    tsa_finding_evidence(f, "slow in %.0f%% of its operations, threshold %.0f%%; both ranks' "
                            "other links not slow; the sender's proxy's wait for the GPU not "
                            "grown",
                         100 * p->consistent, 100 * (double)TSA_TH_LINK_CONSISTENT);
    char cut[160];
    tsa_netlink_cut_note(a, cut, sizeof cut);
    if (cut[0])
        tsa_finding_evidence(f, "%s", cut);
    tsa_finding_number(f, "src_rank", first->src);
    tsa_finding_number(f, "dst_rank", first->dst);
    tsa_finding_number(f, "ratio", ratio);
    tsa_finding_number(f, "step_us", p->step_ns / 1e3);
    tsa_finding_number(f, "median_link_step_us", med / 1e3);
    tsa_finding_number(f, "gbps", gbps);
    tsa_finding_number(f, "others_gbps", other);
    tsa_finding_number(f, "channel_mask", p->mask); /* bit c: channel c (8 numbers at most) */
    return 0;
}

static double recv_median(const tsa_link_stat *l, size_t n)
{
    double *v = malloc(sizeof *v * (n ? n : 1));
    size_t k = 0;
    for (size_t i = 0; v && i < n; i++)
        if (l[i].recv_wait_ns_median >= 0)
            v[k++] = l[i].recv_wait_ns_median;
    double m = v ? median_of(v, k) : -1;
    free(v);
    return m;
}

int tsa_slow_links(const tsa_job *job, tsa_link_stat **out, size_t *n, double *median_send_ns,
                   double *median_recv_ns)
{
    tsa_link_stat *l;
    size_t nl;
    double med;
    if (tsa_link_stats(job, &l, &nl, &med))
        return -1;
    *median_send_ns = med;
    *median_recv_ns = recv_median(l, nl);
    size_t k = 0;
    for (size_t i = 0; nl >= TSA_LINK_MIN_PAIRS && med > 0 && i < nl; i++)
        if (is_slow(&l[i]))
            l[k++] = l[i];
    *out = l;
    *n = k;
    return 0;
}

int tsa_netlink_findings(const tsa_analysis *a, tsa_findings *out)
{
    tsa_link_stat *l;
    size_t n;
    double med;
    if (tsa_link_stats(a->job, &l, &n, &med))
        return -1;
    int rc = 0;
    double other = tsa_other_links_gbps(l, n);
    for (size_t b = 0, e; n >= TSA_LINK_MIN_PAIRS && med > 0 && b < n && !rc; b = e) {
        for (e = b + 1; e < n && l[e].src == l[b].src && l[e].dst == l[b].dst; e++)
            ;
        slow_pair p;
        sum_pair(l, b, e, &p);
        if (p.links)
            rc = report(a, &l[b], &p, other, out);
    }
    free(l);
    return rc;
}

static double number_of(const tsa_finding *f, const char *name)
{
    for (size_t i = 0; i < f->n_numbers; i++)
        if (!strcmp(f->numbers[i].name, name))
            return f->numbers[i].value;
    return -1;
}

void tsa_netlink_pacing(const tsa_analysis *a, char *buf, size_t len)
{
    const tsa_finding *best = NULL;
    *buf = 0;
    for (size_t i = 0; i < a->findings.n; i++) {
        const tsa_finding *f = &a->findings.items[i];
        if (!strcmp(f->id, "NET.SLOW_LINK") &&
            (!best || number_of(f, "ratio") > number_of(best, "ratio")))
            best = f;
    }
    if (!best)
        return;
    char ch[96] = "";
    size_t at = 0, n = 0;
    double m = number_of(best, "channel_mask");
    uint64_t mask = m > 0 && m < 9007199254740992.0 ? (uint64_t)m : 0;
    for (int c = 0; c < 53 && at + 8 < sizeof ch; c++)
        if (mask >> c & 1) {
            at += (size_t)snprintf(ch + at, sizeof ch - at, "%s%d", at ? "," : "", c);
            n++;
        }
    snprintf(buf, len,
             ", paced by one slow link: rank %.0f -> rank %.0f on channel%s %s, %.1fx slower "
             "than the other links of its channel (NET.SLOW_LINK)",
             number_of(best, "src_rank"), number_of(best, "dst_rank"), n == 1 ? "" : "s", ch,
             number_of(best, "ratio"));
}

/* bench_nprof full against light (docs/nccl-plugin.md, "Cost of the
 * callbacks"), the shared 2-core VM at load 6-15, 2026-11-28. */
#define FULL_COST_TEXT "0.12-0.19 us of CPU per network step on NCCL's proxy thread"

void tsa_netlink_light_hint(const tsa_analysis *a, char *buf, size_t len)
{
    size_t colls = 0, proxies = 0;
    *buf = 0;
    for (size_t i = 0; i < a->job->n_ranks; i++) {
        const tsa_rank *r = &a->job->ranks[i];
        if (!r->nprof)
            continue;
        tsa_np_lean tmp;
        const tsa_np_lean *l = tsa_rank_np_lean(r, TSA_NPL_SUMMARY, &tmp);
        if (l) {
            colls += l->colls;
            proxies += l->proxies;
        }
        tsa_np_lean_free(&tmp);
    }
    if (colls && !proxies)
        snprintf(buf, len,
                 "; light capture times no network link: TSCOPE_NCCL_PROFILER=full names "
                 "a slow one (cost: %s)",
                 FULL_COST_TEXT);
}
