/* The HTA-compatible view (--window gpu-span), for people who move from
 * Holistic Trace Analysis: per rank, its temporal breakdown (compute,
 * non-compute, idle as shares of the span) and its overlap percentage,
 * computed from tscope's exact interval sets over HTA's span
 * (gpu_span.h).  docs/validation.md compares them with HTA's own output. */
#ifndef TSA_HTA_VIEW_H
#define TSA_HTA_VIEW_H

#include "model/analysis.h"
#include "rank_pass.h"

typedef struct tsa_hta_shares {
    int64_t span_ns;          /* the rank's window */
    int64_t compute_ns;       /* union of computation kernels (not NCCL, memcpy, memset) */
    int64_t non_compute_ns;   /* NCCL or memcpy/memset kernels running, no computation */
    int64_t idle_ns;          /* no GPU record running */
    double compute_pct, non_compute_pct, idle_pct;  /* of the span */
    double overlap_pct;       /* computation during communication / communication; NAN
                               * without communication */
} tsa_hta_shares;

/* From one rank's result: compute = G, non-compute = exposed communication
 * + copy-only time, idle = the rest (rank_pass.c defines the sets). */
void tsa_hta_shares_of(const tsa_rank_result *r, tsa_hta_shares *out);

/* tsa_rank_pass over the GPU records HTA keeps (tsa_rank_hta_kept): the
 * others (launch not in the trace, or after the last step began) are left
 * out of every set, as HTA leaves them out.  -1 on OOM. */
int tsa_rank_pass_hta(tsa_rank *r, const tsa_arrivals *arr, double flops, double peak_flops,
                      tsa_rank_result *res);

#endif
