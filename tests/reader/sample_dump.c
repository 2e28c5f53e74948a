#include <string.h>

#include "sample_dump.h"

static void meta_chunk(tb_buf *b, sample_layout *lay)
{
    static const char *const kv[] = {
        TSC_META_HOST, "node1", TSC_META_PID, "4242", TSC_META_RANK, "3",
        TSC_META_LOCAL_RANK, "3", TSC_META_WORLD_SIZE, "8", TSC_META_RUN_ID, "run-abc",
        TSC_META_RUN_ID_SOURCE, "torchrun", TSC_META_RESTART, "0", TSC_META_CMDLINE,
        "python train.py --x", TSC_META_START_REALTIME, "1700000000000000000",
        TSC_META_LIB_VERSION, "0.1.0", TSC_META_NCCL_VERSION, "22809", TSC_META_CUPTI_MODE,
        "full", TSC_META_CUPTI_STATUS, "ok", TSC_META_DEVICE_NAME, "NVIDIA H100 80GB HBM3",
        TSC_META_DROPPED, "5", NULL};
    char p[1024];
    size_t n = tb_meta(p, sizeof p, kv);
    lay->chunk_off[0] = tb_chunk(b, TSC_CHUNK_META, 0, 0, p, (uint32_t)n);
    lay->chunk_end[0] = b->len;
}

/* Host thread: thread name, an NCCL call, a GEMM, an NVTX range, a clock sample. */
static void host_chunk(tb_buf *b, sample_layout *lay)
{
    tb_slots s = {0};
    uint8_t th[sizeof(tsc_desc_thread) + 6];
    tsc_desc_thread t = {.tid = 1001, .name_len = 6};
    memcpy(th, &t, sizeof t);
    memcpy(th + sizeof t, "python", 6);
    tb_desc(&s, TSC_DESC_THREAD, 1, th, sizeof th);
    tsc_desc_nccl_call c = {.op = TSC_NCCL_ALLREDUCE, .dtype = TSC_DT_BFLOAT16, .redop = 0,
                            .peer = TSC_NO_PEER, .count = 1048576, .bytes = 2097152,
                            .comm_id = SAMPLE_COMM, .comm_rank = 3, .comm_size = 8,
                            .stream = 0x7f00, .parent_comm_id = 0, .color = 0};
    tb_desc(&s, TSC_DESC_NCCL_CALL, SAMPLE_NCCL_DESC, &c, sizeof c);
    tb_event(&s, TSC_EV_NCCL, TSC_NCCL_F_IN_GROUP, (uint16_t)((0 << 8) | 1), SAMPLE_NCCL_DESC,
             SAMPLE_T0 + 100, SAMPLE_T0 + 200, SAMPLE_NCCL_SEQ);
    tsc_desc_gemm g = {.m = 4096, .n = 4096, .k = 1024, .batch = 2, .api = TSC_GEMM_LT_MATMUL,
                       .transa = 1, .transb = 0, .a_type = 14, .c_type = 14,
                       .compute_type = 68, .flops = 2ull * 4096 * 4096 * 1024 * 2};
    tb_desc(&s, TSC_DESC_GEMM, 3, &g, sizeof g);
    tb_event(&s, TSC_EV_GEMM, 0, 0, 3, SAMPLE_T0 + 300, SAMPLE_T0 + 310, 5);
    tb_string(&s, 4, "ProfilerStep#1");
    tb_event(&s, TSC_EV_NVTX, 0, 0, 4, SAMPLE_T0 + 50, SAMPLE_T0 + 900, 0);
    tb_event(&s, TSC_EV_CLOCK, 0, 0, 0, SAMPLE_T0 + 1, SAMPLE_T0 + 2, 123456789);
    lay->chunk_off[1] = tb_chunk(b, TSC_CHUNK_EVENTS, 1001, 1, s.s,
                                 (uint32_t)(s.n * TSC_SLOT_SIZE));
    lay->chunk_end[1] = b->len;
    lay->chunk_events[1] = 4;
    lay->chunk_descs[1] = 4;
    tb_slots_free(&s);
}

/* CUPTI thread: kernels, copies, a sync, an API record, an external correlation. */
static void gpu_chunk(tb_buf *b, sample_layout *lay)
{
    tb_slots s = {0};
    tb_string(&s, 10, SAMPLE_NCCL_KERNEL); /* 79 bytes: head + 2 continuation slots */
    tsc_desc_kernel k = {.name = 10, .device = 0, .stream = 13, .grid = {8, 1, 1},
                         .block = {512, 1, 1}, .shared_mem = 1024, .graph_id = 0};
    tb_desc(&s, TSC_DESC_KERNEL, 11, &k, sizeof k);
    tb_event(&s, TSC_EV_KERNEL, 0, 0, 11, SAMPLE_T0 + 150, SAMPLE_T0 + 400, SAMPLE_CORR_NCCL);
    tb_event(&s, TSC_EV_EXTCORR, 2, 0, SAMPLE_CORR_NCCL, 0, 0,
             TSC_EXTCORR_ID(SAMPLE_NCCL_DESC, SAMPLE_NCCL_SEQ));
    tsc_desc_copy cp = {.dir = TSC_COPY_H2D, .pinned = 1, .device = 0, .stream = 7,
                        .dst_device = 0, .bytes = 65536};
    tb_desc(&s, TSC_DESC_COPY, 12, &cp, sizeof cp);
    tb_event(&s, TSC_EV_MEMCPY, 0, 0, 12, SAMPLE_T0 + 10, SAMPLE_T0 + 20, 550);
    tsc_desc_copy ms = {.dir = TSC_COPY_MEMSET, .device = 0, .stream = 7, .bytes = 4096};
    tb_desc(&s, TSC_DESC_COPY, 13, &ms, sizeof ms);
    tb_event(&s, TSC_EV_MEMSET, 0, 0, 13, SAMPLE_T0 + 30, SAMPLE_T0 + 31, 551);
    tsc_desc_sync sy = {.type = TSC_SYNC_STREAM, .stream = 7, .tid = 1001};
    tb_desc(&s, TSC_DESC_SYNC, 14, &sy, sizeof sy);
    tb_event(&s, TSC_EV_SYNC, 0, 0, 14, SAMPLE_T0 + 500, SAMPLE_T0 + 600, 552);
    tb_string(&s, 15, "cuLaunchKernelEx");
    tsc_desc_api api = {.domain = TSC_API_DRIVER, .cbid = 652, .tid = 1001, .name = 15};
    tb_desc(&s, TSC_DESC_API, 16, &api, sizeof api);
    tb_event(&s, TSC_EV_API, 0, 0, 16, SAMPLE_T0 + 140, SAMPLE_T0 + 145, SAMPLE_CORR_NCCL);
    tb_string(&s, 17, SAMPLE_GEMM_KERNEL);
    tsc_desc_kernel k2 = {.name = 17, .device = 0, .stream = 7, .grid = {132, 1, 1},
                          .block = {384, 1, 1}, .graph_id = 9};
    tb_desc(&s, TSC_DESC_KERNEL, 18, &k2, sizeof k2);
    tb_event(&s, TSC_EV_KERNEL, 0, 0, 18, SAMPLE_T0 + 320, SAMPLE_T0 + 700, SAMPLE_CORR_GEMM);
    tb_event(&s, TSC_EV_KERNEL, 0, 0, 18, SAMPLE_T0 + 710, SAMPLE_T0 + 800, SAMPLE_CORR_GEMM + 1);
    lay->chunk_off[2] = tb_chunk(b, TSC_CHUNK_EVENTS, 2002, 2, s.s,
                                 (uint32_t)(s.n * TSC_SLOT_SIZE));
    lay->chunk_end[2] = b->len;
    lay->chunk_events[2] = 8;
    lay->chunk_descs[2] = 9;
    tb_slots_free(&s);
}

void sample_dump(tb_buf *b, sample_layout *lay)
{
    memset(lay, 0, sizeof *lay);
    tb_header(b, SAMPLE_T0 - 5, 4242);
    meta_chunk(b, lay);
    host_chunk(b, lay);
    gpu_chunk(b, lay);
    static const char *const kv[] = {TSC_META_END_REASON, "exit", TSC_META_DROPPED, "6", NULL};
    char p[128];
    size_t n = tb_meta(p, sizeof p, kv);
    lay->chunk_off[3] = tb_chunk(b, TSC_CHUNK_END, 0, 3, p, (uint32_t)n);
    lay->chunk_end[3] = b->len;
}
