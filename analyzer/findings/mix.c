/* Kernel-mix and copy findings: MEM.COPIES, MEM.FILLS, MEM.PAGEABLE,
 * EFF.FP32_GEMM (see mix.h). */
#include "mix.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "advisory.h"
#include "load/job_build.h"
#include "passes/peak_table.h"
#include "passes/rank_stages.h"
#include "util/sat_math.h"

int tsa_mix_measure(const tsa_analysis *a, tsa_mix *out)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < a->n_ranks; i++) {
        const tsa_mix *p = &a->digests[i].mix;
        out->ranks += p->ranks;
        TSA_SAT_ACC(out->gpu_ns, p->gpu_ns);
        TSA_SAT_ACC(out->mem_ns, p->mem_ns);
        TSA_SAT_ACC(out->mem_exposed_ns, p->mem_exposed_ns);
        TSA_SAT_ACC(out->fill_exposed_ns, p->fill_exposed_ns);
        TSA_SAT_ACC(out->pageable_ns, p->pageable_ns);
        out->pageable_count += p->pageable_count;
        out->pageable_bytes += p->pageable_bytes;
        TSA_SAT_ACC(out->fp32_gemm_ns, p->fp32_gemm_ns);
        for (int d = 0; d < 7; d++)
            TSA_SAT_ACC(out->dir_ns[d], p->dir_ns[d]);
        TSA_SAT_ACC(out->h2d_ns, p->h2d_ns);
        TSA_SAT_ACC(out->d2h_ns, p->d2h_ns);
        TSA_SAT_ACC(out->both_ns, p->both_ns);
        for (int x = 0; x < 2; x++) {
            out->xfer_bytes[x] += p->xfer_bytes[x];
            TSA_SAT_ACC(out->xfer_known_ns[x], p->xfer_known_ns[x]);
        }
        if (p->link_mbps > 0 && (out->link_mbps == 0 || p->link_mbps < out->link_mbps))
            out->link_mbps = p->link_mbps;
    }
    return 0;
}

static double share_of(int64_t part, int64_t whole)
{
    return whole > 0 ? (double)part / (double)whole : 0;
}

static int memory_findings(const tsa_mix *m, tsa_findings *out)
{
    double mem = share_of(m->mem_exposed_ns, m->gpu_ns),
           fill = share_of(m->fill_exposed_ns, m->gpu_ns);
    tsa_finding *f;
    if (mem > TSA_TH_MEM_OPS) {
        double all = share_of(m->mem_ns, m->gpu_ns),
               h2d = share_of(m->dir_ns[TSA_COPY_H2D], m->gpu_ns),
               d2h = share_of(m->dir_ns[TSA_COPY_D2H], m->gpu_ns),
               d2d = share_of(m->dir_ns[TSA_COPY_D2D] + m->dir_ns[TSA_COPY_P2P], m->gpu_ns),
               set = share_of(m->dir_ns[TSA_COPY_MEMSET], m->gpu_ns);
        f = tsa_findings_add(
            out, "MEM.COPIES", tsa_advisory_level(mem, TSA_TH_MEM_OPS), 0, -1,
            "Keep tensors where they are used: move .to()/.cuda()/.cpu() out of the step, "
            "copy inputs with pin_memory=True and non_blocking=True so they overlap compute, "
            "avoid .contiguous()/.clone() device copies and zero-filled buffers",
            "memcpy/memset not overlapped by any kernel take %.1f%% of GPU busy time (all "
            "copies: host-to-device %.1f%%, device-to-host %.1f%%, device-to-device %.1f%%, "
            "memset %.1f%%)",
            100 * mem, 100 * h2d, 100 * d2h, 100 * d2d, 100 * set);
        if (!f)
            return -1;
        tsa_finding_evidence(f, "memcpy and memset records no kernel of the same rank ran "
                                "under: %.1f%% of GPU busy time (%.3f ms), threshold %.0f%%",
                             100 * mem, (double)m->gpu_ns / 1e6, 100 * TSA_TH_MEM_OPS);
        tsa_finding_evidence(f, "the copy records' directions, as CUPTI or the trace named "
                                "them (host-to-device, device-to-host, device-to-device, memset)");
        tsa_finding_number(f, "memory_exposed_share", mem);
        tsa_finding_number(f, "memory_share", all);
        tsa_finding_number(f, "h2d_share", h2d);
        tsa_finding_number(f, "d2h_share", d2h);
        tsa_finding_number(f, "d2d_share", d2d);
        tsa_finding_number(f, "memset_share", set);
        tsa_finding_number(f, "gpu_busy_s", (double)m->gpu_ns / 1e9);
    }
    if (fill > TSA_TH_FILLS) {
        f = tsa_findings_add(
            out, "MEM.FILLS", tsa_advisory_level(fill, TSA_TH_FILLS), 0, -1,
            "Do not zero what is overwritten anyway: optimizer.zero_grad(set_to_none=True), "
            "torch.empty instead of torch.zeros for buffers that are fully written, and no "
            "per-step re-allocation of zero-initialised tensors",
            "memset (fills) not overlapped by any kernel take %.1f%% of GPU busy time",
            100 * fill);
        if (!f)
            return -1;
        tsa_finding_evidence(f, "memset records no kernel of the same rank ran under: %.1f%% of "
                                "GPU busy time (%.3f s of GPU busy time), threshold %.0f%%",
                             100 * fill, (double)m->gpu_ns / 1e9, 100 * TSA_TH_FILLS);
        tsa_finding_number(f, "memset_exposed_share", fill);
    }
    return 0;
}

static int pageable_finding(const tsa_mix *m, tsa_findings *out)
{
    double pg = share_of(m->pageable_ns, m->gpu_ns);
    if (pg <= TSA_TH_PAGEABLE)
        return 0;
    tsa_finding *f = tsa_findings_add(
        out, "MEM.PAGEABLE", tsa_advisory_level(pg, TSA_TH_PAGEABLE), 0, -1,
        "Pin host memory: DataLoader(pin_memory=True) and .to(device, non_blocking=True); "
        "call .pin_memory() on long-lived host buffers that are copied every step",
        "%llu host-to-device copies from pageable memory (%.1f MB) take %.1f%% of GPU busy "
        "time; they are staged by the driver and block the host",
        (unsigned long long)m->pageable_count, (double)m->pageable_bytes / 1e6, 100 * pg);
    if (!f)
        return -1;
    tsa_finding_evidence(f, "%llu host-to-device copy records whose source memory was "
                            "recorded as pageable: %.1f%% of GPU busy time, threshold %.0f%%",
                         (unsigned long long)m->pageable_count, 100 * pg, 100 * TSA_TH_PAGEABLE);
    tsa_finding_number(f, "pageable_share", pg);
    tsa_finding_number(f, "pageable_copies", (double)m->pageable_count);
    tsa_finding_number(f, "pageable_bytes", (double)m->pageable_bytes);
    return 0;
}

/* The fastest tensor-core precision of the device over its fp32 rate; 0
 * when the device is not in the peak table, 1 when nothing is faster. */
static double faster_dtype(const char *device, tsa_dtype *best)
{
    double fp32 = tsa_peak_flops(device, TSA_DTYPE_FP32, NULL), top = 0;
    static const tsa_dtype cand[] = {TSA_DTYPE_TF32, TSA_DTYPE_BF16, TSA_DTYPE_FP16};
    *best = TSA_DTYPE_UNKNOWN;
    if (fp32 <= 0)
        return 0;
    for (size_t i = 0; i < sizeof cand / sizeof cand[0]; i++) {
        double p = tsa_peak_flops(device, cand[i], NULL);
        if (p > top) {
            top = p;
            *best = cand[i];
        }
    }
    return top > fp32 ? top / fp32 : 1;
}

/* A device the peak table does not hold: its tensor-core precisions from
 * its CUDA compute capability (cc, major * 10 + minor): TF32 and bf16 from
 * 8.0 (Ampere), fp16 tensor cores only on 7.x (Volta, Turing), none below.
 * Unknown (TSA_DTYPE_UNKNOWN) when no capability was recorded, or on an
 * AMD GPU, whose reported major/minor is its gfx architecture, not this. */
static tsa_dtype dtype_by_capability(const char *device, unsigned cc)
{
    if (!cc || (device && (strstr(device, "AMD") || strstr(device, "Instinct") ||
                           strstr(device, "Radeon"))))
        return TSA_DTYPE_UNKNOWN;
    return cc >= 80 ? TSA_DTYPE_TF32 : cc >= 70 ? TSA_DTYPE_FP16 : TSA_DTYPE_FP32;
}

static const char *const fp32_fix_tf32 =
    "Let the GEMMs use tensor cores: torch.set_float32_matmul_precision(\"high\") "
    "(TF32; also torch.backends.cudnn.allow_tf32), or autocast to bf16 "
    "(torch.autocast(\"cuda\", dtype=torch.bfloat16))";
static const char *const fp32_fix_fp16 =
    "This GPU has fp16 tensor cores but no TF32/bf16: run the step under "
    "torch.autocast(\"cuda\", dtype=torch.float16) with a GradScaler";
static const char *const fp32_fix_unknown =
    "If this GPU has tensor cores: on compute capability 8.0 or newer (Ampere and later) "
    "torch.set_float32_matmul_precision(\"high\") (TF32) or autocast to bf16; on 7.x (Volta, "
    "Turing: no TF32 or bf16) torch.autocast(\"cuda\", dtype=torch.float16) with a GradScaler";

static int fp32_finding(const tsa_analysis *a, const tsa_mix *m, tsa_findings *out)
{
    double share = share_of(m->fp32_gemm_ns, m->gpu_ns);
    if (share <= TSA_TH_FP32_GEMM)
        return 0;
    tsa_dtype best;
    double ratio = faster_dtype(a->device_name, &best);
    if (ratio == 1)
        return 0; /* a known GPU with nothing faster than fp32 */
    unsigned cc = a->device_cc;
    if (ratio == 0) {
        best = dtype_by_capability(a->device_name, cc);
        if (best == TSA_DTYPE_FP32)
            return 0; /* compute capability below 7.0: no tensor cores */
    }
    const char *fix = best == TSA_DTYPE_FP16      ? fp32_fix_fp16
                      : best == TSA_DTYPE_UNKNOWN ? fp32_fix_unknown
                                                  : fp32_fix_tf32;
    tsa_severity sev = tsa_advisory_level(share, TSA_TH_FP32_GEMM);
    tsa_finding *f;
    if (ratio > 1)
        f = tsa_findings_add(out, "EFF.FP32_GEMM", sev, 0, -1, fix,
                             "GEMM kernels in plain fp32 take %.1f%% of GPU busy time; "
                             "this GPU's %s peak is %.1fx its fp32 peak",
                             100 * share, tsa_dtype_name(best), ratio);
    else if (best != TSA_DTYPE_UNKNOWN)
        f = tsa_findings_add(out, "EFF.FP32_GEMM", sev, 0, -1, fix,
                             "GEMM kernels in plain fp32 take %.1f%% of GPU busy time (GPU not "
                             "in the peak table; compute capability %u.%u has %s tensor cores)",
                             100 * share, cc / 10, cc % 10,
                             best == TSA_DTYPE_FP16 ? "fp16 but no TF32 or bf16"
                                                    : "TF32 and bf16");
    else
        f = tsa_findings_add(out, "EFF.FP32_GEMM", sev, 0, -1, fix,
                             "GEMM kernels in plain fp32 take %.1f%% of GPU busy time (GPU not "
                             "in the peak table and no compute capability recorded: whether "
                             "it has TF32, bf16 or fp16 tensor cores is unknown)",
                             100 * share);
    if (!f)
        return -1;
    tsa_finding_evidence(f, "GEMM kernels whose name says plain fp32 (no tensor-core "
                            "instruction): %.1f%% of GPU busy time", 100 * share);
    tsa_finding_evidence(f, ratio > 1 ? "the device's row in the peak table: %s"
                                      : "the device is not in the peak table: %s",
                         a->device_name ? a->device_name : "unknown device");
    if (ratio == 0 && best != TSA_DTYPE_UNKNOWN)
        tsa_finding_evidence(f, "the device's compute capability, recorded: %u.%u (TF32 and "
                                "bf16 from 8.0, fp16 tensor cores only on 7.x)",
                             cc / 10, cc % 10);
    else if (ratio == 0)
        tsa_finding_evidence(f, cc ? "the recorded compute capability %u.%u is not CUDA's "
                                     "(an AMD GPU): the advice is conditional"
                                   : "no compute capability recorded: the advice is "
                                     "conditional",
                             cc / 10, cc % 10);
    tsa_finding_number(f, "fp32_gemm_share", share);
    tsa_finding_number(f, "peak_ratio", ratio > 0 ? ratio : NAN); /* not in the table: unknown */
    return 0;
}

/* A job whose wall time is mostly host-device copies with no kernel
 * running (half of it or more: the copy-bound verdict's case): what the
 * copies show about the transfer.  Both directions but never at once
 * is a serialised link (PCIe is full duplex: copies on two streams, from
 * pinned memory, overlap); each direction's bandwidth, against the link's
 * when the rank's telemetry recorded its generation and width. */
static int transfer_finding(const tsa_analysis *a, const tsa_mix *m, tsa_findings *out)
{
    const tsa_budget *b = &a->budget;
    if (b->wall_ns <= 0 || (double)b->line_ns[TSA_BL_COPY] < 0.5 * (double)b->wall_ns ||
        m->h2d_ns + m->d2h_ns <= 0)
        return 0;
    double gbps[2];
    for (int x = 0; x < 2; x++)
        gbps[x] = m->xfer_known_ns[x] > 0 ? (double)m->xfer_bytes[x] / (double)m->xfer_known_ns[x]
                                          : NAN;
    int serial = m->h2d_ns > 0 && m->d2h_ns > 0 && m->both_ns == 0;
    double link = m->link_mbps / 1e3;
    char bw[2][32], lk[160];
    for (int x = 0; x < 2; x++)
        if (isnan(gbps[x]))
            snprintf(bw[x], sizeof bw[x], "unknown");
        else
            snprintf(bw[x], sizeof bw[x], "%.2f GB/s", gbps[x]);
    if (link > 0 && !isnan(gbps[0]) && !isnan(gbps[1]))
        snprintf(lk, sizeof lk, "the PCIe link moves %.1f GB/s per direction (telemetry): "
                 "%.0f%% and %.0f%% of it", link, 100 * gbps[0] / link, 100 * gbps[1] / link);
    else
        snprintf(lk, sizeof lk, "the link's bandwidth is not recorded (a torch.profiler trace "
                 "names no PCIe generation or width), so it cannot be compared");
    tsa_finding *f = tsa_findings_add(
        out, "MEM.TRANSFER", TSA_SEV_WARNING, 0, -1,
        "Copy from pinned memory (tensor.pin_memory(), DataLoader(pin_memory=True)) with "
        "non_blocking=True, and put the two directions on separate CUDA streams so they overlap "
        "on the full-duplex link; move fewer bytes (keep data on the GPU, lower precision)",
        "the GPU's time is host-device copies (evidence: %.1f ms host-to-device and %.1f ms "
        "device-to-host of copy records, no kernel running); %s; host-to-device %s, "
        "device-to-host %s; %s",
        (double)m->h2d_ns / 1e6, (double)m->d2h_ns / 1e6,
        serial ? "the two directions never ran at the same time (serialised)"
               : m->both_ns > 0 ? "the two directions overlapped part of the time"
                                : "one direction only",
        bw[0], bw[1], lk);
    if (!f)
        return -1;
    tsa_finding_evidence(f, "copy records with no kernel running: %.1f ms host-to-device, "
                            "%.1f ms device-to-host, %.1f ms both at once",
                         (double)m->h2d_ns / 1e6, (double)m->d2h_ns / 1e6, (double)m->both_ns / 1e6);
    tsa_finding_evidence(f, "link bandwidth: %s", link > 0 ? "PCIe generation and width from the "
                                                             "rank's telemetry"
                                                           : "not recorded");
    tsa_finding_number(f, "h2d_gbps", gbps[0]);
    tsa_finding_number(f, "d2h_gbps", gbps[1]);
    tsa_finding_number(f, "directions_overlap_s", (double)m->both_ns / 1e9);
    tsa_finding_number(f, "link_gbps", link > 0 ? link : NAN);
    return 0;
}

int tsa_mix_findings(const tsa_analysis *a, tsa_findings *out)
{
    tsa_mix m;
    if (tsa_mix_measure(a, &m))
        return -1;
    if (!m.ranks || m.gpu_ns <= 0)
        return 0;
    if (memory_findings(&m, out) || pageable_finding(&m, out) || fp32_finding(a, &m, out) ||
        transfer_finding(a, &m, out))
        return -1;
    return 0;
}
