/* Kernel, collective and copy tables over the analysis windows. */
#ifndef TSA_TABLES_H
#define TSA_TABLES_H

#include "analysis.h"

#define TSA_TOP_KERNELS 10

/* Fills a->kernels (top by time), a->colls, a->copies.  -1 on OOM. */
int tsa_build_tables(tsa_analysis *a);

int tsa_size_bucket(uint64_t bytes);
/* Size bucket of a call: TSA_SIZE_UNKNOWN when its bytes are not known. */
int tsa_nccl_size_bucket(const tsa_nccl_op *op);
/* nccl-tests bus bandwidth factor for an op on n ranks. */
double tsa_busbw_factor(uint8_t op, uint32_t n);

#endif
