/* FLOPs and peak (after stage 2 of the per-rank stages). */
#ifndef TSA_JOB_FLOPS_H
#define TSA_JOB_FLOPS_H

#include "model/analysis.h"
#include "rank_digest.h"

/* Each rank's FLOPs (its GEMMs, or an option's per-step figure), their sum
 * and source, the dominant GEMM dtype and the peak FLOP/s (--peak-tflops,
 * else the peak table). */
void tsa_job_flops(tsa_analysis *a);

#endif
