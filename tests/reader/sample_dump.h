/* A small, valid dump with every event kind and descriptor type, and the
 * facts the tests check it against. */
#ifndef TEST_SAMPLE_DUMP_H
#define TEST_SAMPLE_DUMP_H

#include "dump_builder.h"

#define SAMPLE_CHUNKS 4
#define SAMPLE_EVENTS 12
#define SAMPLE_DESCS 13
#define SAMPLE_COMM 0x1234abcd5678ef00ull
#define SAMPLE_CORR_NCCL 555u
#define SAMPLE_CORR_GEMM 556u
#define SAMPLE_NCCL_DESC 2u
#define SAMPLE_NCCL_SEQ 7u
#define SAMPLE_T0 1700000000000000000ull
#define SAMPLE_NCCL_KERNEL \
    "_Z40ncclDevKernel_AllReduce_Sum_bf16_RING_LL24ncclDevKernelArgsStorageILm4096EE"
#define SAMPLE_GEMM_KERNEL "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64"

typedef struct sample_layout {
    size_t chunk_off[SAMPLE_CHUNKS];  /* file offset of each chunk header */
    size_t chunk_end[SAMPLE_CHUNKS];  /* offset just past each chunk */
    size_t chunk_events[SAMPLE_CHUNKS];
    size_t chunk_descs[SAMPLE_CHUNKS];
} sample_layout;

void sample_dump(tb_buf *b, sample_layout *lay);

#endif
