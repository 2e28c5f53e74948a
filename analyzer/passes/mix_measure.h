/* The kernel mix of one rank's window, for the advisory rules of
 * findings/mix.h: GPU busy time, memcpy/memset not overlapped by kernels,
 * pageable copies, fp32 GEMMs. */
#ifndef TSA_MIX_MEASURE_H
#define TSA_MIX_MEASURE_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

/* Kernel-mix totals over the ranks whose dumps carry compute kernels (a
 * light-mode capture records only NCCL kernels: its mix would be wrong). */
typedef struct tsa_mix {
    size_t ranks;               /* ranks measured */
    int64_t gpu_ns;             /* union of kernels and copies, windows */
    int64_t mem_ns;             /* union of memcpy and memset records */
    int64_t mem_exposed_ns;     /* the part of it with no kernel running */
    int64_t fill_exposed_ns;    /* memset records with no kernel running */
    int64_t pageable_ns;        /* union of pageable host-to-device copies */
    uint64_t pageable_count, pageable_bytes;
    int64_t fp32_gemm_ns;       /* union of fp32 GEMM kernels */
    int64_t dir_ns[7];          /* copy time by tsa_copy_dir (durations summed) */
    /* host-device transfers (issue 38): union of each direction, the time
     * both ran at once, bytes of sized copies and their time */
    int64_t h2d_ns, d2h_ns, both_ns;
    uint64_t xfer_bytes[2];     /* [0] host-to-device, [1] device-to-host */
    int64_t xfer_known_ns[2];
    /* PCIe link per direction in MB/s from the rank's telemetry (the
     * lowest over the ranks that recorded it), 0 when none did */
    double link_mbps;
} tsa_mix;

/* Adds one rank's part (window [w0, w1)) to m.  -1 on OOM. */
int tsa_mix_measure_rank(const tsa_rank *r, int64_t w0, int64_t w1, tsa_mix *m);
/* 1 when `token` occurs in `name` bounded by non-alphanumerics (or the
 * ends): "sgemm" in "volta_sgemm_128x64_nn", not in "s1688gemm". */
int tsa_name_has_token(const char *name, const char *token);

#endif
