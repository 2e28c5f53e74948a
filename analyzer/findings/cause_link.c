/* A slow link as a blamed rank's cause (cause_link.h).  Of the slow links
 * the rank is on, the one whose extra time costs it most: its sends on
 * the wire (sender) or its receives waiting for the data (receiver), per
 * network step beyond the median link's, summed per channel over its
 * analysis window; channels run side by side, so the slowest channel's
 * sum is what the rank waits, per analysed step.  Only its send/recv
 * count: in a collective every member waits for the slowest link alike,
 * so a slow link there makes no rank later than its peers (NET.SLOW_LINK
 * names it); a point-to-point transfer (a pipeline stage's activations)
 * delays the rank at its end of the link alone. */
#include "cause_link.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load/comm_ranks.h"
#include "load/nprof_reduce.h"
#include "netlink.h"

#define LINK_CHANNELS 64

/* What one pair costs the rank: excess per channel and its figures. */
typedef struct {
    int peer, send;
    double excess[LINK_CHANNELS];
    double step_ns;              /* the link's time per step (the larger channel's) */
    char channels[96];
} pair_cost;

/* The rank's own send/recv proxy ops on the pair, within its window
 * (l: its lean records, load/nprof_lean.h). */
static void own_excess(const tsa_comm_ranks *m, const tsa_np_lean *l, int64_t w0, int64_t w1,
                       double base, pair_cost *pc)
{
    for (size_t k = 0; k < l->n_p2p_ops; k++) {
        const tsa_np_p2p_op *p = &l->p2p_ops[k];
        if (p->send != pc->send || p->start_ns < w0 || p->start_ns >= w1 ||
            p->channel >= LINK_CHANNELS)
            continue;
        if (tsa_comm_rank_global(m, p->comm_id, p->peer) != pc->peer)
            continue;
        double over = (double)p->t_ns - (double)p->steps * base;
        if (over > 0)
            pc->excess[p->channel] += over;
    }
}

static double slowest_channel(const pair_cost *pc)
{
    double worst = 0;
    for (int ch = 0; ch < LINK_CHANNELS; ch++)
        if (pc->excess[ch] > worst)
            worst = pc->excess[ch];
    return worst;
}

/* The slow channels of pair (src, dst) among l: its figures into pc. */
static void pair_figures(const tsa_link_stat *l, size_t n, int src, int dst, pair_cost *pc)
{
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        if (l[i].src != src || l[i].dst != dst)
            continue;
        double step = pc->send ? l[i].step_ns_median : l[i].recv_wait_ns_median;
        if (step > pc->step_ns)
            pc->step_ns = step;
        if (at + 8 < sizeof pc->channels)
            at += (size_t)snprintf(pc->channels + at, sizeof pc->channels - at, "%s%d",
                                   at ? "," : "", l[i].channel);
    }
}

static void fill(const pair_cost *pc, double explained, double median, double steps,
                 tsa_cause *out)
{
    memset(out, 0, sizeof *out);
    out->explained_ns = (int64_t)llround(explained);
    out->metric = pc->send ? "link_wire_ns_per_network_step" : "link_wait_ns_per_network_step";
    out->own = pc->step_ns;
    out->peers = median;
    snprintf(out->evidence, sizeof out->evidence,
             "its %s rank %d %s %.0f us per network step vs %.0f us on the median link "
             "(%.1fx; channel%s %s, NET.SLOW_LINK): %.3f ms per step more in its send/recv "
             "than the median link would take, over %.0f steps",
             pc->send ? "sends to" : "receives from", pc->peer,
             pc->send ? "are on the wire" : "wait for their data", pc->step_ns / 1e3,
             median / 1e3, median > 0 ? pc->step_ns / median : 0,
             strchr(pc->channels, ',') ? "s" : "", pc->channels, explained / 1e6, steps);
}

int tsa_cause_link_recorded(const tsa_analysis *a, size_t i)
{
    if (i >= a->n_ranks)
        return 0;
    return tsa_np_proxy_count(&a->job->ranks[i]) > 0;
}

int tsa_cause_link(const tsa_analysis *a, size_t i, tsa_cause *out)
{
    if (!tsa_cause_link_recorded(a, i) || !a->steps)
        return 0;
    const tsa_rank *r = &a->job->ranks[i];
    tsa_link_stat *l;
    size_t n;
    double med_send, med_recv;
    if (tsa_slow_links(a->job, &l, &n, &med_send, &med_recv))
        return -1;
    tsa_comm_ranks m;
    tsa_np_lean tmp;
    const tsa_np_lean *own = n ? tsa_rank_np_lean(r, TSA_NPL_P2P, &tmp) : NULL;
    if (n && (!own || tsa_comm_ranks_build(a->job, &m))) {
        tsa_np_lean_free(&tmp);
        free(l);
        return -1;
    }
    double steps = (double)a->steps, best = 0;
    int64_t w0 = a->ranks[i].window_start_ns, w1 = a->ranks[i].window_end_ns;
    for (size_t k = 0; k < n; k++) {
        int send = l[k].src == r->rank;
        if (!send && l[k].dst != r->rank)
            continue;
        if (k && l[k - 1].src == l[k].src && l[k - 1].dst == l[k].dst)
            continue; /* the pair's other channels: done with its first */
        pair_cost pc = {.peer = send ? l[k].dst : l[k].src, .send = send};
        pair_figures(l, n, l[k].src, l[k].dst, &pc);
        double median = send || med_recv <= 0 ? med_send : med_recv;
        own_excess(&m, own, w0, w1, median, &pc);
        double explained = slowest_channel(&pc) / steps;
        if (explained > best) {
            best = explained;
            fill(&pc, explained, median, steps, out);
            char cut[160];
            tsa_netlink_cut_note(a, cut, sizeof cut);
            size_t used = strlen(out->evidence);
            if (cut[0])
                snprintf(out->evidence + used, sizeof out->evidence - used, "; %s", cut);
        }
    }
    if (n) {
        tsa_comm_ranks_free(&m);
        tsa_np_lean_free(&tmp);
    }
    free(l);
    return best > 0;
}
