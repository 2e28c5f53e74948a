/* What the kernel-mix rules (findings/mix.h) measure on one rank. */
#include "mix_measure.h"

#include <ctype.h>
#include <string.h>

#include "load/job_build.h"
#include "load/rank_telemetry.h"
#include "tsc_format.h"
#include "util/interval_set.h"
#include "util/sat_math.h"

int tsa_name_has_token(const char *name, const char *token)
{
    size_t n = strlen(token);
    if (!name || !n)
        return 0;
    for (const char *p = strstr(name, token); p; p = strstr(p + 1, token)) {
        int before = p == name || !isalnum((unsigned char)p[-1]);
        int after = !isalnum((unsigned char)p[n]);
        if (before && after)
            return 1;
    }
    return 0;
}

/* A GEMM kernel computing in plain fp32: the dtype of its cuBLAS call when
 * the kernel is linked to one, else cuBLAS/CUTLASS's own name for fp32 SIMT
 * GEMMs ("sgemm"), which is all a torch.profiler trace tells. */
static int is_fp32_gemm(const tsa_rank *r, const tsa_kernel *k)
{
    if (k->gemm >= 0 && (size_t)k->gemm < r->n_gemms)
        return r->gemms[k->gemm].dtype == TSA_DTYPE_FP32;
    return tsa_name_has_token(tsa_rank_string(r, k->name), "sgemm");
}

enum { S_BUSY, S_KERNELS, S_MEM, S_FILL, S_PAGEABLE, S_FP32, S_H2D, S_D2H, S_COUNT };

/* MB/s per direction of a PCIe link of generation gen and width lanes
 * (after line coding: 8b/10b up to gen 2, 128b/130b from gen 3, FLIT
 * from gen 6); 0 when either is unknown. */
static double pcie_mbps(uint64_t gen, uint64_t width)
{
    static const double lane[] = {0, 250, 500, 984.6, 1969.2, 3938.5, 7877};
    return gen >= 1 && gen <= 6 && width ? lane[gen] * (double)width : 0;
}

/* The rank's PCIe link as its telemetry last recorded it, 0 when not. */
static double rank_link_mbps(const tsa_rank *r)
{
    const struct tsa_telemetry *t = r->telemetry;
    uint64_t gen = 0, width = 0;
    for (size_t i = 0; t && i < t->n_gpu; i++) {
        if (t->gpu[i].metric == TSC_GPU_PCIE_GEN)
            gen = t->gpu[i].value;
        else if (t->gpu[i].metric == TSC_GPU_PCIE_WIDTH)
            width = t->gpu[i].value;
    }
    return pcie_mbps(gen, width);
}

static int64_t clipped(int64_t s, int64_t e, int64_t w0, int64_t w1)
{
    s = s > w0 ? s : w0;
    e = e < w1 ? e : w1;
    return e > s ? e - s : 0;
}

int tsa_mix_measure_rank(const tsa_rank *r, int64_t w0, int64_t w1, tsa_mix *m)
{
    /* GPU work in the window: a compute kernel, or a copy on a rank with
     * no kernel at all (it only copies: its copies are all its GPU time).
     * NCCL kernels and copies without compute kernels are CUPTI's light
     * mode, where the mix is unknown. */
    int work = 0;
    for (size_t i = 0; i < r->n_kernels && !work; i++)
        work = r->kernels[i].category != TSA_KCAT_COMM && r->kernels[i].end_ns > w0 &&
               r->kernels[i].start_ns < w1;
    for (size_t i = 0; !r->n_kernels && i < r->n_copies && !work; i++)
        work = r->copies[i].end_ns > w0 && r->copies[i].start_ns < w1;
    if (!work)
        return 0;
    tsa_ivset s[S_COUNT];
    for (int i = 0; i < S_COUNT; i++)
        tsa_ivset_init(&s[i]);
    int oom = 0;
    for (size_t i = 0; i < r->n_kernels; i++) {
        const tsa_kernel *k = &r->kernels[i];
        oom |= tsa_ivset_push(&s[S_BUSY], k->start_ns, k->end_ns);
        oom |= tsa_ivset_push(&s[S_KERNELS], k->start_ns, k->end_ns);
        if (is_fp32_gemm(r, k))
            oom |= tsa_ivset_push(&s[S_FP32], k->start_ns, k->end_ns);
    }
    for (size_t i = 0; i < r->n_copies; i++) {
        const tsa_copy *c = &r->copies[i];
        oom |= tsa_ivset_push(&s[S_BUSY], c->start_ns, c->end_ns);
        oom |= tsa_ivset_push(&s[S_MEM], c->start_ns, c->end_ns);
        if (c->dir == TSA_COPY_MEMSET)
            oom |= tsa_ivset_push(&s[S_FILL], c->start_ns, c->end_ns);
        int64_t d = clipped(c->start_ns, c->end_ns, w0, w1);
        if (c->dir < 7)
            TSA_SAT_ACC(m->dir_ns[c->dir], d);
        if ((c->dir == TSA_COPY_H2D || c->dir == TSA_COPY_D2H) && d > 0) {
            int x = c->dir == TSA_COPY_D2H;
            oom |= tsa_ivset_push(&s[x ? S_D2H : S_H2D], c->start_ns, c->end_ns);
            if (!c->bytes_unknown) {
                m->xfer_bytes[x] += c->bytes;
                TSA_SAT_ACC(m->xfer_known_ns[x], c->end_ns - c->start_ns);
            }
        }
        if (c->dir == TSA_COPY_H2D && c->pageable && d > 0) {
            oom |= tsa_ivset_push(&s[S_PAGEABLE], c->start_ns, c->end_ns);
            m->pageable_count++;
            m->pageable_bytes += c->bytes;
        }
    }
    int64_t len[S_COUNT];
    for (int i = 0; i < S_COUNT; i++) {
        tsa_ivset_normalize(&s[i]);
        tsa_ivset_clip(&s[i], w0, w1);
        len[i] = tsa_ivset_length(&s[i]);
    }
    /* Copies hidden behind kernels (a pinned non_blocking copy on a side
     * stream) cost next to nothing: only the rest is exposed. */
    int64_t mem_exposed = len[S_MEM] - tsa_ivset_intersect_length(&s[S_MEM], &s[S_KERNELS]);
    int64_t fill_exposed = len[S_FILL] - tsa_ivset_intersect_length(&s[S_FILL], &s[S_KERNELS]);
    int64_t both = tsa_ivset_intersect_length(&s[S_H2D], &s[S_D2H]);
    for (int i = 0; i < S_COUNT; i++)
        tsa_ivset_free(&s[i]);
    if (oom)
        return -1;
    m->ranks++;
    TSA_SAT_ACC(m->gpu_ns, len[S_BUSY]);
    TSA_SAT_ACC(m->mem_ns, len[S_MEM]);
    TSA_SAT_ACC(m->mem_exposed_ns, mem_exposed);
    TSA_SAT_ACC(m->fill_exposed_ns, fill_exposed);
    TSA_SAT_ACC(m->pageable_ns, len[S_PAGEABLE]);
    TSA_SAT_ACC(m->fp32_gemm_ns, len[S_FP32]);
    TSA_SAT_ACC(m->h2d_ns, len[S_H2D]);
    TSA_SAT_ACC(m->d2h_ns, len[S_D2H]);
    TSA_SAT_ACC(m->both_ns, both);
    double link = rank_link_mbps(r);
    if (link > 0 && (m->link_mbps == 0 || link < m->link_mbps))
        m->link_mbps = link;
    return 0;
}
