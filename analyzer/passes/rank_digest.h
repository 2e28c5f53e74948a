/* What the per-rank stages (rank_stages.h) take from one rank's bulk
 * records for the job-level passes: after them nothing reads those records
 * again (tscope-report-mpi ships only this). */
#ifndef TSA_RANK_DIGEST_H
#define TSA_RANK_DIGEST_H

#include <stddef.h>
#include <stdint.h>

#include "mix_measure.h"
#include "model/analysis.h"
#include "sync_measure.h"

/* Kernel time of one name in a rank's window. */
typedef struct tsa_kernel_total {
    char *name;                 /* owned */
    uint8_t category;
    uint64_t count;
    int64_t ns;
} tsa_kernel_total;

typedef struct tsa_rank_digest {
    /* stage 1 */
    int cut;                    /* the input was cut short (partial.h) */
    char cut_note[384];         /* what that leaves out, "" none */
    /* stage 2 */
    double gemm_flops;          /* FLOPs of the GEMMs in the window */
    double gemm_flops_by_dtype[TSA_DTYPE_COUNT];
    /* stage 3 */
    int has_kernels, has_copies;
    tsa_kernel_total *kernels; size_t n_kernels; /* by name, in the window */
    tsa_copy_row copies[7];     /* by tsa_copy_dir, in the window (gbps unset) */
    int64_t copy_known_ns[7];   /* time of the copies of known size */
    tsa_mix mix;                /* this rank's part of the kernel-mix totals */
    tsa_sync_totals sync;       /* this rank's part of HOST.SYNC */
} tsa_rank_digest;

void tsa_rank_digest_free(tsa_rank_digest *d);

#endif
