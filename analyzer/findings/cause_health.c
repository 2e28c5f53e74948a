/* Link, network and GPU health causes (cause_health.h). */
#include "cause_health.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tsc_format.h"

static const char fix_link[] =
    "Check the GPU's links (nvidia-smi -q -d PCIE; nvidia-smi nvlink -s and -e): reseat or "
    "replace the card, riser or NVLink bridge, check the slot's link settings; drain the node "
    "if the errors keep rising";
static const char fix_network[] =
    "Check the node's InfiniBand/RoCE port (ibstat, perfquery, ethtool -S): replace the cable "
    "or transceiver, or move off that switch port; waits (port_xmit_wait) without errors "
    "point at congestion in the fabric rather than the node";
static const char fix_health[] =
    "Check the GPU's errors (nvidia-smi -q -d ECC,PAGE_RETIREMENT,ROW_REMAPPER; XIDs in "
    "dmesg): reset the GPU to apply pending retirements and remaps; drain and replace it if "
    "uncorrectable errors come back";

/* ns per byte of its copies and of its sends/receives */
static double f_copy_rate(const cm_rank *m)
{
    return m->copy_bytes_step > 0 && m->copy_step_ns > 0 ? m->copy_step_ns / m->copy_bytes_step
                                                          : NAN;
}

static double f_p2p_rate(const cm_rank *m)
{
    return m->p2p_bytes_step > 0 && m->p2p_step_ns > 0 ? m->p2p_step_ns / m->p2p_bytes_step : NAN;
}

static double f_xmit_wait(const cm_rank *m)
{
    return m->net.have ? (double)m->net.grown[TSC_NET_XMIT_WAIT] : NAN;
}

static double f_port_rate(const cm_rank *m)
{
    return m->net.have && m->net.rate_min_mbps ? (double)m->net.rate_min_mbps : NAN;
}

static double f_sm_clock(const cm_rank *m)
{
    return m->gpu.have && m->gpu.sm_clock_mean > 0 ? m->gpu.sm_clock_mean : NAN;
}

/* One kind of transfer of the rank against its peers. */
typedef struct transfer {
    double excess;          /* ns per step beyond its bytes at the peers' rate */
    double rate, peer_rate; /* ns per byte */
} transfer;

static transfer slower(cause_ctx *c, const cm_rank *m, const size_t *peers, size_t np,
                       figure_fn rate_of, double bytes)
{
    transfer t = {0, rate_of(m), median_of(c, peers, np, rate_of)};
    if (!isnan(t.rate) && !isnan(t.peer_rate) && t.rate >= t.peer_rate * (1 + TSA_TH_CAUSE_RATE))
        t.excess = (t.rate - t.peer_rate) * bytes;
    return t;
}

static void transfer_words(char *buf, size_t cap, int *at, const char *what, const transfer *t)
{
    if (t->excess > 0)
        cause_words(buf, cap, at, "%s%s %.1fx slower than its peers' (%.2f vs %.2f ms per MB, "
                    "%.3f ms more per step)", *at ? "; " : "", what, t->rate / t->peer_rate,
                    t->rate, t->peer_rate, t->excess / 1e6);
}

/* Evidence that the GPU's PCIe or NVLink link is in trouble, in words. */
static int link_trouble(const cm_rank *m, char *buf, size_t cap, int *at)
{
    const tsa_gpu_window *g = &m->gpu;
    int any = 0;
    if (!g->have)
        return 0;
    if (g->pcie_width && g->pcie_width < g->pcie_width_max) {
        cause_words(buf, cap, at, "; PCIe link down-trained to gen %u x%u of gen %u x%u",
                    g->pcie_gen, g->pcie_width, g->pcie_gen_max, g->pcie_width_max);
        any = 1;
    }
    if (g->pcie_replays_new) {
        cause_words(buf, cap, at, "; %llu PCIe replays in the window",
                    (unsigned long long)g->pcie_replays_new);
        any = 1;
    }
    if (g->nvlink_links && g->nvlink_active_min < g->nvlink_links) {
        cause_words(buf, cap, at, "; NVLink: %u of %u links active", g->nvlink_active_min,
                    g->nvlink_links);
        any = 1;
    }
    if (g->nvlink_replays_new || g->nvlink_recoveries_new || g->nvlink_crc_new) {
        cause_words(buf, cap, at, "; NVLink errors in the window: %llu replays, %llu recoveries, "
                    "%llu CRC", (unsigned long long)g->nvlink_replays_new,
                    (unsigned long long)g->nvlink_recoveries_new,
                    (unsigned long long)g->nvlink_crc_new);
        any = 1;
    }
    return any;
}

/* Evidence that the host's network port is in trouble, in words. */
static int net_trouble(cause_ctx *c, const cm_rank *m, const size_t *peers, size_t np, char *buf,
                       size_t cap, int *at)
{
    const tsa_net_window *n = &m->net;
    int any = 0;
    if (!n->have)
        return 0;
    if (n->errors_new) {
        cause_words(buf, cap, at, "; port %s errors in the window: %llu symbol, %llu link downed, "
                    "%llu link recovery, %llu receive", n->worst_port ? n->worst_port : "?",
                    (unsigned long long)n->grown[TSC_NET_SYMBOL_ERROR],
                    (unsigned long long)n->grown[TSC_NET_LINK_DOWNED],
                    (unsigned long long)n->grown[TSC_NET_LINK_RECOVERY],
                    (unsigned long long)n->grown[TSC_NET_RCV_ERRORS]);
        any = 1;
    }
    double xw = f_xmit_wait(m), pxw = median_of(c, peers, np, f_xmit_wait);
    if (xw > 0 && (isnan(pxw) || xw >= 2 * pxw)) {
        cause_words(buf, cap, at, "; port_xmit_wait +%.0f in the window vs %.0f on its peers", xw,
                    isnan(pxw) ? 0 : pxw);
        any = 1;
    }
    if (n->not_active) {
        cause_words(buf, cap, at, "; a port left the ACTIVE state");
        any = 1;
    }
    double rate = f_port_rate(m), prate = median_of(c, peers, np, f_port_rate);
    if (!isnan(rate) && !isnan(prate) && rate < prate) {
        cause_words(buf, cap, at, "; port at %.0f Gb/s vs %.0f on its peers", rate / 1e3,
                    prate / 1e3);
        any = 1;
    }
    return any;
}

/* Evidence that the GPU itself is failing, in words. */
static int gpu_trouble(const cm_rank *m, char *buf, size_t cap, int *at)
{
    const tsa_gpu_window *g = &m->gpu;
    int any = 0;
    if (!g->have)
        return 0;
    if (g->xid_events) {
        cause_words(buf, cap, at, "; %llu critical XID event%s in the run, the last XID %llu",
                    (unsigned long long)g->xid_events, g->xid_events > 1 ? "s" : "",
                    (unsigned long long)g->xid_last);
        any = 1;
    }
    uint64_t unc = g->ecc_new > g->ecc_agg_unc_new ? g->ecc_new : g->ecc_agg_unc_new;
    if (unc) {
        cause_words(buf, cap, at, "; %llu uncorrectable ECC errors in the window (%llu corrected)",
                    (unsigned long long)unc, (unsigned long long)g->ecc_agg_corr_new);
        any = 1;
    }
    if (g->retired_pages_new || g->retired_pending) {
        cause_words(buf, cap, at, "; %llu pages retired (%llu in the window)%s",
                    (unsigned long long)g->retired_pages,
                    (unsigned long long)g->retired_pages_new,
                    g->retired_pending ? ", a retirement pending until reset" : "");
        any = 1;
    }
    if (g->remapped_new || g->remap_state) {
        cause_words(buf, cap, at, "; rows remapped: %llu for uncorrectable, %llu for "
                    "correctable errors%s%s", (unsigned long long)g->remapped_unc,
                    (unsigned long long)g->remapped_corr,
                    g->remap_state & 1 ? ", a remapping pending until reset" : "",
                    g->remap_state & 2 ? ", a remapping failed" : "");
        any = 1;
    }
    return any;
}

/* A cause from transfers slower than the peers' and trouble on the way. */
static void transfer_cause(const transfer *copies, const transfer *p2p,
                           const char *trouble, const tsa_cause_block *b, const char *fix,
                           candidate *out)
{
    double excess = (copies ? copies->excess : 0) + (p2p ? p2p->excess : 0);
    if (excess < TSA_TH_CAUSE_REL * (double)b->peer_step_ns)
        return;
    double extra = (double)b->extra_ns;
    out->explained = extra > 0 && excess > extra ? extra : excess;
    int by_copy = copies && copies->excess >= (p2p ? p2p->excess : 0);
    out->metric = by_copy ? "copy_ns_per_byte" : "send_recv_ns_per_byte";
    out->own = by_copy ? copies->rate : p2p->rate;
    out->peers = by_copy ? copies->peer_rate : p2p->peer_rate;
    out->fix = fix;
    int at = 0;
    out->evidence[0] = 0;
    if (copies)
        transfer_words(out->evidence, sizeof out->evidence, &at, "its host-device copies are",
                       copies);
    if (p2p)
        transfer_words(out->evidence, sizeof out->evidence, &at, "its sends and receives are",
                       p2p);
    cause_words(out->evidence, sizeof out->evidence, &at, "%s", trouble);
}

void cause_health(cause_ctx *c, const cm_rank *m, const size_t *peers, size_t np,
                  const tsa_cause_block *b, candidate *cand)
{
    char trouble[TSA_CAUSE_TEXT];
    transfer copies = slower(c, m, peers, np, f_copy_rate, m->copy_bytes_step);
    transfer p2p = slower(c, m, peers, np, f_p2p_rate, m->p2p_bytes_step);
    int at = 0;
    trouble[0] = 0;
    if (link_trouble(m, trouble, sizeof trouble, &at))
        transfer_cause(&copies, &p2p, trouble, b, fix_link, &cand[TSA_CAUSE_GPU_LINK]);
    at = 0;
    trouble[0] = 0;
    if (net_trouble(c, m, peers, np, trouble, sizeof trouble, &at))
        transfer_cause(NULL, &p2p, trouble, b, fix_network, &cand[TSA_CAUSE_NETWORK]);
    /* a receive the slow link or port explains is not an upstream rank's delay */
    double by_link = fmax(cand[TSA_CAUSE_GPU_LINK].explained, cand[TSA_CAUSE_NETWORK].explained);
    candidate *arr = &cand[TSA_CAUSE_ARRIVAL];
    if (p2p.excess > 0 && by_link > 0 && arr->evidence[0] && arr->explained <= by_link)
        memset(arr, 0, sizeof *arr);

    candidate *dev = &cand[TSA_CAUSE_DEVICE], *h = &cand[TSA_CAUSE_GPU_HEALTH];
    at = 0;
    trouble[0] = 0;
    if (!dev->evidence[0] || !dev->metric || strcmp(dev->metric, "compute_kernel_ns_per_step") ||
        !gpu_trouble(m, trouble, sizeof trouble, &at))
        return;
    h->explained = dev->explained;
    h->metric = dev->metric;
    h->own = dev->own;
    h->peers = dev->peers;
    h->fix = fix_health;
    snprintf(h->evidence, sizeof h->evidence, "%s%s", trouble + 2, "");
    at = (int)strlen(h->evidence);
    cause_words(h->evidence, sizeof h->evidence, &at, "; the same kernels run %.0f%% longer "
                "(%.3f vs %.3f ms per step)", 100 * (dev->own / dev->peers - 1), dev->own / 1e6,
                dev->peers / 1e6);
    /* at its peers' clocks the GPU's errors, not its clocks, explain them */
    double clk = f_sm_clock(m), pclk = median_of(c, peers, np, f_sm_clock);
    if (isnan(clk) || isnan(pclk) || clk >= pclk * (1 - TSA_TH_CAUSE_REL)) {
        if (!isnan(clk) && !isnan(pclk))
            cause_words(h->evidence, sizeof h->evidence, &at, "; SM clock %.0f vs %.0f MHz",
                        clk, pclk);
        memset(dev, 0, sizeof *dev);
    }
}

void cause_health_checked(const cm_rank *m, char *buf, size_t cap, int *at)
{
    const tsa_gpu_window *g = &m->gpu;
    cause_words(buf, cap, at, "; copy and send/receive rates; GPU links and health (%s)",
                !g->have ? "no NVML samples"
                : g->nvlink_links ? "PCIe, NVLink, XID, ECC, retired pages, remapped rows"
                                  : "PCIe, XID, ECC, retired pages, remapped rows; no NVLink");
    if (m->net.have)
        cause_words(buf, cap, at, "; network ports (%zu sampled)", m->net.ports);
    else
        cause_words(buf, cap, at, "; network ports (none sampled)");
}
