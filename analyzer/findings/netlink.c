/* NET.SLOW_LINK (netlink.h).  Every proxy operation of a sender says how
 * long its steps were on the wire to one peer over one channel; a link
 * that is slow makes every step over it slow, while scheduling noise hits
 * steps at random.  So each pair's typical (median) step is compared with
 * the typical pair's, and a pair is named only when most of its operations
 * are slow.  Advisory: the time it costs is already in the communication
 * lines the cross-rank findings attribute. */
#include "netlink.h"

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
    double per_step;
    uint64_t bytes, wire;
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
                                  .send = lp->send, .per_step = (double)t[k] / steps[k],
                                  .bytes = k ? 0 : lp->bytes, .wire = k ? 0 : lp->wire_ns};
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

static int fill_link(const sample *s, size_t b, size_t e, double *tmp, tsa_link_stat *l)
{
    *l = (tsa_link_stat){.src = s[b].src, .dst = s[b].dst, .channel = s[b].ch};
    for (size_t i = b; i < e; i++)
        if (s[i].send) {
            l->ops++;
            l->bytes += s[i].bytes;
            l->wire_ns += s[i].wire;
        }
    if (!l->ops)
        return 0;
    l->step_ns_median = median_where(s, b, e, 1, tmp);
    l->recv_wait_ns_median = median_where(s, b, e, 0, tmp);
    return 1;
}

/* Against the median link: the share of its operations above 1.5x. */
static void judge_link(const sample *s, size_t b, size_t e, double median, tsa_link_stat *l)
{
    size_t above = 0;
    for (size_t i = b; i < e; i++)
        if (s[i].send && s[i].per_step > 1.5 * median)
            above++;
    l->consistent = l->ops ? (double)above / (double)l->ops : 0;
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

/* Median per step of owner's samples other than those of link l seen from
 * that side (send: l's own; receive: l's receiver's); s sorted by owner. */
static double owner_base(const sample *s, size_t ns, int owner, const tsa_link_stat *l, int send,
                         double *tmp)
{
    sample key = {.owner = owner};
    const sample *hit = bsearch(&key, s, ns, sizeof *s, by_owner);
    if (!hit)
        return -1;
    size_t b = (size_t)(hit - s), k = 0;
    while (b > 0 && s[b - 1].owner == owner)
        b--;
    for (size_t i = b; i < ns && s[i].owner == owner; i++)
        if (!(s[i].send == send && s[i].src == l->src && s[i].dst == l->dst &&
              s[i].ch == l->channel))
            tmp[k++] = s[i].per_step;
    return median_of(tmp, k);
}

/* A link against the other links of its two ends: a process starved of
 * CPU is slow on all of them, a slow link only on itself. */
static void own_ratios(sample *s, size_t ns, tsa_link_stat *l, size_t nl, double *tmp)
{
    qsort(s, ns, sizeof *s, by_owner);
    for (size_t k = 0; k < nl; k++) {
        double sb = owner_base(s, ns, l[k].src, &l[k], 1, tmp);
        double rb = owner_base(s, ns, l[k].dst, &l[k], 0, tmp);
        l[k].sender_rel = sb > 0 ? l[k].step_ns_median / sb : -1;
        l[k].receiver_rel = rb > 0 && l[k].recv_wait_ns_median >= 0
                                ? l[k].recv_wait_ns_median / rb
                                : -1;
    }
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
    for (size_t b = 0, e, k = 0; b < ns && nl; b = e) {
        e = link_end(s, ns, b);
        if (k < nl && l[k].src == s[b].src && l[k].dst == s[b].dst && l[k].channel == s[b].ch)
            judge_link(s, b, e, med, &l[k++]);
    }
    own_ratios(s, ns, l, nl, tmp);
    free(s);
    free(tmp);
    *out = l;
    *n = nl;
    *median_ns = med;
    return 0;
}

/* The medians a link is judged against: the sender's time on the wire
 * and the receiver's wait for the data, per step, of the median link. */
typedef struct { double send, recv; } medians;

/* Slow against the job's median link, step after step; slow against the
 * sender's other links too, and, when the receiver recorded its side,
 * confirmed by the receiver against its other links. */
static int is_slow(const tsa_link_stat *l, const medians *m)
{
    return l->step_ns_median >= TSA_TH_LINK_RATIO * m->send &&
           l->step_ns_median - m->send >= TSA_TH_LINK_ABS_NS &&
           l->consistent >= TSA_TH_LINK_CONSISTENT &&
           l->sender_rel >= TSA_TH_LINK_RATIO &&
           (l->receiver_rel < 0 || l->receiver_rel >= TSA_TH_LINK_RECV_RATIO);
}

/* The slow channels of one pair, [b, e) of the links, as one finding. */
typedef struct {
    char channels[128];
    size_t ops, links;
    double step_ns, consistent, recv_wait_ns;
    uint64_t bytes, wire;
} slow_pair;

static void sum_pair(const tsa_link_stat *l, size_t b, size_t e, const medians *med,
                     slow_pair *p)
{
    size_t at = 0;
    *p = (slow_pair){.consistent = 1, .recv_wait_ns = -1};
    for (size_t i = b; i < e; i++) {
        if (!is_slow(&l[i], med))
            continue;
        if (at + 8 < sizeof p->channels)
            at += (size_t)snprintf(p->channels + at, sizeof p->channels - at, "%s%d",
                                   at ? "," : "", l[i].channel);
        p->links++;
        p->ops += l[i].ops;
        p->bytes += l[i].bytes;
        p->wire += l[i].wire_ns;
        if (l[i].step_ns_median > p->step_ns)
            p->step_ns = l[i].step_ns_median;
        if (l[i].consistent < p->consistent)
            p->consistent = l[i].consistent;
        if (l[i].recv_wait_ns_median > p->recv_wait_ns)
            p->recv_wait_ns = l[i].recv_wait_ns_median;
    }
}

/* GB/s of the links that are not slow. */
static double others_gbps(const tsa_link_stat *all, size_t n, const medians *med)
{
    uint64_t bytes = 0, wire = 0;
    for (size_t i = 0; i < n; i++)
        if (!is_slow(&all[i], med)) {
            bytes += all[i].bytes;
            wire += all[i].wire_ns;
        }
    return wire ? (double)bytes / (double)wire : 0;
}

static int report(const tsa_link_stat *first, const slow_pair *p, const medians *m,
                  double other, tsa_findings *out)
{
    double med = m->send, ratio = p->step_ns / med;
    double gbps = p->wire ? (double)p->bytes / (double)p->wire : 0;
    tsa_finding *f = tsa_findings_add(
        out, "NET.SLOW_LINK", ratio >= 3 ? TSA_SEV_WARNING : TSA_SEV_INFO, 0, first->src,
        "Test the link between the two ranks' hosts (ib_write_bw / nccl-tests between that "
        "pair), check the NIC and cable counters (ibstat, ethtool -S: symbol errors, link "
        "downgrades), and the PCIe link of the NIC; exclude the node if it persists",
        "link rank %d -> rank %d (channel%s %s) is %.1fx slower than the median link: "
        "%.0f us per network step vs %.0f us, %.3f GB/s vs %.3f GB/s on the other links, "
        "slow in %.0f%% of its %zu proxy operations%s",
        first->src, first->dst, strchr(p->channels, ',') ? "s" : "", p->channels, ratio,
        p->step_ns / 1e3, med / 1e3, gbps, other, 100 * p->consistent, p->ops,
        p->recv_wait_ns >= 0 && m->recv > 0 ? "; the receiver waits for its data as long" : "");
    if (!f)
        return -1;
    tsa_finding_number(f, "src_rank", first->src);
    tsa_finding_number(f, "dst_rank", first->dst);
    tsa_finding_number(f, "ratio", ratio);
    tsa_finding_number(f, "step_us", p->step_ns / 1e3);
    tsa_finding_number(f, "median_link_step_us", med / 1e3);
    tsa_finding_number(f, "gbps", gbps);
    tsa_finding_number(f, "others_gbps", other);
    tsa_finding_number(f, "slow_channels", (double)p->links);
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
    medians m = {.send = med, .recv = recv_median(l, nl)};
    size_t k = 0;
    for (size_t i = 0; nl >= TSA_LINK_MIN_PAIRS && med > 0 && i < nl; i++)
        if (is_slow(&l[i], &m))
            l[k++] = l[i];
    *out = l;
    *n = k;
    *median_send_ns = m.send;
    *median_recv_ns = m.recv;
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
    medians m = {.send = med, .recv = recv_median(l, n)};
    double other = others_gbps(l, n, &m);
    for (size_t b = 0, e; n >= TSA_LINK_MIN_PAIRS && med > 0 && b < n && !rc; b = e) {
        for (e = b + 1; e < n && l[e].src == l[b].src && l[e].dst == l[b].dst; e++)
            ;
        slow_pair p;
        sum_pair(l, b, e, &m, &p);
        if (p.links)
            rc = report(&l[b], &p, &m, other, out);
    }
    free(l);
    return rc;
}
