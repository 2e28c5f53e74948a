/* Kernel, collective and copy tables over the analysis windows. */
#ifndef TSA_TABLES_H
#define TSA_TABLES_H

#include "model/analysis.h"

#define TSA_TOP_KERNELS 10

struct tsa_arrivals;
/* Fills a->kernels (top by time), a->colls, a->copies from the ranks'
 * digests and NCCL calls; arr (may be NULL: no waiting known) gives each
 * collective's latest arrival, so bus bandwidth is over the time after
 * it (the transfer), not the waiting.  -1 on OOM. */
int tsa_build_tables(tsa_analysis *a, const struct tsa_arrivals *arr);

struct tsa_kernel_total;
/* One rank's kernel time by name in its window, in string index order
 * (stage 3, rank_stages.h): *out malloc'd, NULL when none.  -1 on OOM. */
int tsa_kernel_totals(const tsa_rank *r, const tsa_rank_result *rr,
                      struct tsa_kernel_total **out, size_t *n_out);
/* One rank's copies in its window by direction (gbps left 0), and the time
 * of those of known size. */
void tsa_copy_totals(const tsa_rank *r, const tsa_rank_result *rr, tsa_copy_row all[7],
                     int64_t known_ns[7]);

int tsa_size_bucket(uint64_t bytes);
/* Size bucket of a call: TSA_SIZE_UNKNOWN when its bytes are not known. */
int tsa_nccl_size_bucket(const tsa_nccl_op *op);
/* nccl-tests bus bandwidth factor for an op on n ranks. */
double tsa_busbw_factor(uint8_t op, uint32_t n);

#endif
