/* NCCL PROFILER PLUGIN section (plugin_view.h). */
#include "plugin_view.h"

#include <stdlib.h>

#include "load/rank_nprof.h"
#include "passes/coll_transfer.h"
#include "passes/nprof_summary.h"
#include "tsc_nccl_ops.h"

uint64_t tsa_plugin_lost(const tsa_job *job)
{
    uint64_t lost = 0;
    for (size_t i = 0; i < job->n_ranks; i++)
        if (job->ranks[i].nprof)
            lost += job->ranks[i].nprof->lost;
    return lost;
}

static void summary_lines(FILE *out, const tsa_np_summary *s)
{
    if (s->version_min == s->version_max)
        fprintf(out, "  plugin ABI v%d on %zu ranks\n", s->version_max, s->ranks);
    else
        fprintf(out, "  plugin ABI v%d-v%d on %zu ranks\n", s->version_min, s->version_max,
                s->ranks);
    fprintf(out, "  %zu collectives (%zu by the copy engines), %zu joined to their NCCL call; "
                 "%zu send/recv\n",
            s->colls, s->ce_colls, s->joined, s->p2p);
    if (s->no_call || s->captured_calls)
        fprintf(out, "  %zu collectives without an NCCL call (replayed from CUDA graphs, or the "
                     "call was not recorded); %zu calls NCCL said were captured into a graph\n",
                s->no_call, s->captured_calls);
    if (s->kch && s->kch_gpu && s->kernel_ns_median >= 0)
        fprintf(out, "  %zu kernel channels: GPU time per collective (its longest channel) "
                     "median %.1f us, p95 %.1f us\n",
                s->kch, s->kernel_ns_median / 1e3, s->kernel_ns_p95 / 1e3);
    else if (s->kch)
        fprintf(out, "  %zu kernel channels (host times only: NCCL gave no GPU timer)\n", s->kch);
    if (s->lost)
        fprintf(out, "  plugin events lost: %llu (NCCL had more open than tscope's pools hold, "
                     "or reused a handle: the tables below miss them; TSCOPE_NP_POOLS)\n",
                (unsigned long long)s->lost);
    if (s->pxn_ops)
        fprintf(out, "  %llu proxy operations ran here for another process (PXN): counted, "
                     "their links not attributed\n",
                (unsigned long long)s->pxn_ops);
}

static double gbps(uint64_t bytes, uint64_t ns) { return ns ? (double)bytes / (double)ns : 0; }

static int slowest_step(const void *pa, const void *pb)
{
    const tsa_xfer *a = pa, *b = pb;
    double x = a->steps ? (double)a->wire_ns / (double)a->steps : 0;
    double y = b->steps ? (double)b->wire_ns / (double)b->steps : 0;
    return (x < y) - (x > y);
}

static void row(FILE *out, const char *name, const tsa_xfer *x)
{
    fprintf(out, "      %-14s %6zu %7zu %10.2f %10.3f %9.1f %8.3f %11.1f", name, x->ops,
            x->steps, (double)x->bytes / 1048576.0, (double)x->wire_ns / 1e6,
            x->steps ? (double)x->wire_ns / (double)x->steps / 1e3 : 0,
            gbps(x->bytes, x->wire_ns),
            x->steps ? (double)x->wait_peer_ns / (double)x->steps / 1e3 : 0);
    if (x->kernel_n)
        fprintf(out, " %10.1f", (double)x->kernel_ns / (double)x->kernel_n / 1e3);
    fputc('\n', out);
}

static void table_head(FILE *out, const char *what, int kernel)
{
    fprintf(out, "      %-14s %6s %7s %10s %10s %9s %8s %11s%s\n", what, "ops", "steps", "MiB",
            "wire ms", "us/step", "GB/s", "credit us", kernel ? "  kernel us" : "");
}

static void one_coll(FILE *out, tsa_coll_xfer *g, size_t max_rows)
{
    fprintf(out, "    %s on communicator %016llx (%u ranks): %zu collectives on %zu ranks, "
                 "%.2f MiB, %.3f GB/s on the wire\n",
            tsc_nccl_op_name(g->op), (unsigned long long)g->comm_id, g->comm_size, g->colls,
            g->ranks, (double)g->bytes / 1048576.0, gbps(g->bytes, g->wire_ns));
    qsort(g->peers, g->n_peers, sizeof *g->peers, slowest_step);
    table_head(out, "by peer", 0);
    for (size_t i = 0; i < g->n_peers && i < max_rows; i++) {
        char name[40];
        snprintf(name, sizeof name, "%d -> %d", g->peers[i].src, g->peers[i].dst);
        row(out, name, &g->peers[i]);
    }
    if (g->n_peers > max_rows)
        fprintf(out, "      ... %zu more peers, slowest shown (--json: all)\n",
                g->n_peers - max_rows);
    int kernel = 0;
    for (size_t i = 0; i < g->n_channels; i++)
        kernel |= g->channels[i].kernel_n > 0;
    table_head(out, "by channel", kernel);
    for (size_t i = 0; i < g->n_channels && i < max_rows; i++) {
        char name[16];
        snprintf(name, sizeof name, "%d", g->channels[i].channel);
        row(out, name, &g->channels[i]);
    }
    if (g->n_channels > max_rows)
        fprintf(out, "      ... %zu more channels (--json: all)\n", g->n_channels - max_rows);
}

static int transfers(FILE *out, const tsa_analysis *a, size_t max_colls, size_t max_rows)
{
    tsa_coll_xfer *x;
    size_t n;
    if (tsa_coll_xfers(a->job, &x, &n))
        return -1;
    if (n)
        fprintf(out, "  TRANSFERS BY COLLECTIVE (sender side; credit: waiting for the "
                     "receiver's credit; kernel: its GPU time per channel)\n");
    for (size_t i = 0; i < n && i < max_colls; i++)
        one_coll(out, &x[i], max_rows);
    if (n > max_colls)
        fprintf(out, "    ... %zu more collectives (--json: all)\n", n - max_colls);
    tsa_coll_xfers_free(x, n);
    return 0;
}

static void replays(FILE *out, const tsa_np_summary *s, size_t max_rows)
{
    if (!s->n_replays)
        return;
    fprintf(out, "  GRAPH REPLAYS (collectives without an NCCL call, by NCCL's sequence "
                 "number)\n");
    fprintf(out, "      %5s %-14s %6s %6s %7s %7s %10s %10s %10s\n", "rank", "op", "seq",
            "times", "ops", "steps", "MiB", "GB/s", "kernel us");
    for (size_t i = 0; i < s->n_replays && i < max_rows; i++) {
        const tsa_np_replay *r = &s->replays[i];
        fprintf(out, "      %5d %-14s %6llu %6zu %7zu %7zu %10.2f %10.3f", r->rank,
                tsc_nccl_op_name(r->op), (unsigned long long)r->seq, r->colls, r->proxy_ops,
                r->steps, (double)r->bytes / 1048576.0, gbps(r->bytes, r->wire_ns));
        if (r->kernel_ns >= 0)
            fprintf(out, " %10.1f", r->kernel_ns / 1e3);
        fputc('\n', out);
    }
    if (s->n_replays > max_rows)
        fprintf(out, "      ... %zu more (--json: all)\n", s->n_replays - max_rows);
}

int tsa_plugin_print(FILE *out, const tsa_analysis *a, size_t max_colls, size_t max_rows)
{
    if (!tsa_np_any(a->job))
        return 0;
    tsa_np_summary s;
    if (tsa_np_summarize(a->job, &s))
        return -1;
    summary_lines(out, &s);
    int rc = transfers(out, a, max_colls, max_rows);
    replays(out, &s, max_rows);
    tsa_np_summary_free(&s);
    return rc;
}
