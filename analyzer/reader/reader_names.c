/* Names for the numeric codes of the dump format, for people and JSON. */
#include <string.h>
#include <time.h>

#include "dump_reader.h"

#define LOOKUP(table, v) \
    ((size_t)(v) < sizeof(table) / sizeof(table[0]) ? table[(size_t)(v)] : NULL)

const char *tsr_event_kind_name(uint8_t kind)
{
    return tsc_event_kind_name(kind);
}

const char *tsr_desc_type_name(uint8_t type)
{
    switch (type) {
    case TSC_DESC_STRING: return "string";
    case TSC_DESC_NCCL_CALL: return "nccl_call";
    case TSC_DESC_THREAD: return "thread";
    case TSC_DESC_KERNEL: return "kernel";
    case TSC_DESC_KERNEL_LAUNCH: return "kernel_launch";
    case TSC_DESC_GRAPH_NODE: return "graph_node";
    case TSC_DESC_COPY: return "copy";
    case TSC_DESC_SYNC: return "sync";
    case TSC_DESC_API: return "api";
    case TSC_DESC_GEMM: return "gemm";
    case TSC_DESC_TASK: return "task";
    case TSC_DESC_MEM: return "mem";
    default: return NULL;
    }
}

const char *tsr_chunk_type_name(uint16_t type)
{
    static const char *const t[] = {NULL, "META", "EVENTS", "END", NULL, NULL, "STEPS",
                                    "STEP_EXTRA"};
    return LOOKUP(t, type);
}

const char *tsr_nccl_op_name(uint8_t op)
{
    return tsc_nccl_op_name(op);
}

const char *tsr_nccl_dtype_name(uint8_t dtype)
{
    static const char *const t[] = {
        [TSC_DT_INT8] = "int8",         [TSC_DT_UINT8] = "uint8",
        [TSC_DT_INT32] = "int32",       [TSC_DT_UINT32] = "uint32",
        [TSC_DT_INT64] = "int64",       [TSC_DT_UINT64] = "uint64",
        [TSC_DT_FLOAT16] = "float16",   [TSC_DT_FLOAT32] = "float32",
        [TSC_DT_FLOAT64] = "float64",   [TSC_DT_BFLOAT16] = "bfloat16",
        [TSC_DT_FLOAT8E4M3] = "float8e4m3", [TSC_DT_FLOAT8E5M2] = "float8e5m2",
    };
    if (dtype == TSC_DT_NONE)
        return "none";
    return LOOKUP(t, dtype);
}

const char *tsr_nccl_redop_name(uint8_t redop)
{
    static const char *const t[] = {"sum", "prod", "max", "min", "avg"};
    if (redop == TSC_REDOP_NONE)
        return "none";
    /* ncclRedOpCreatePreMulSum hands out values from ncclNumOps (5) up. */
    return redop < 5 ? t[redop] : "custom";
}

const char *tsr_nccl_result_name(uint8_t result)
{
    static const char *const t[] = {
        "ncclSuccess",         "ncclUnhandledCudaError", "ncclSystemError",
        "ncclInternalError",   "ncclInvalidArgument",    "ncclInvalidUsage",
        "ncclRemoteError",     "ncclInProgress",
    };
    return LOOKUP(t, result);
}

const char *tsr_copy_dir_name(uint8_t dir)
{
    static const char *const t[] = {"other", "H2D", "D2H", "D2D", "P2P", "H2H", "memset"};
    return LOOKUP(t, dir);
}

const char *tsr_sync_type_name(uint8_t type)
{
    static const char *const t[] = {"other",  "event",   "stream_wait_event",
                                    "stream", "context", "device"};
    return LOOKUP(t, type);
}

const char *tsr_api_domain_name(uint8_t domain)
{
    static const char *const t[] = {NULL, "runtime", "driver"};
    return LOOKUP(t, domain);
}

const char *tsr_gemm_api_name(uint8_t api)
{
    static const char *const t[] = {
        NULL,
        [TSC_GEMM_LT_MATMUL] = "cublasLtMatmul",
        [TSC_GEMM_EX] = "cublasGemmEx",
        [TSC_GEMM_STRIDED_BATCHED_EX] = "cublasGemmStridedBatchedEx",
        [TSC_GEMM_TYPED] = "cublasXgemm",
        [TSC_GEMM_BATCHED_EX] = "cublasGemmBatchedEx",
        [TSC_GEMM_TYPED_STRIDED] = "cublasXgemmStridedBatched",
    };
    return LOOKUP(t, api);
}

const char *tsr_nccl_op_from_kernel_name(const char *name)
{
    static const char *const prefixes[] = {"ncclDevKernel_", "ncclSymkDevKernel_",
                                           "ncclKernel_"};
    /* Longest first, so "ReduceScatter" is not taken for "Reduce". */
    static const struct { const char *token, *op; } ops[] = {
        {"ReduceScatter", "ReduceScatter"}, {"AllReduce", "AllReduce"},
        {"AllGather", "AllGather"},         {"Broadcast", "Broadcast"},
        {"SendRecv", "SendRecv"},           {"AlltoAll", "AlltoAll"},
        {"AllToAll", "AlltoAll"},           {"Reduce", "Reduce"},
        {"Send", "Send"},                   {"Recv", "Recv"},
    };
    if (!name)
        return NULL;
    for (size_t p = 0; p < sizeof prefixes / sizeof prefixes[0]; p++) {
        const char *at = strstr(name, prefixes[p]);
        if (!at)
            continue;
        at += strlen(prefixes[p]);
        for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
            size_t n = strlen(ops[i].token);
            /* In mangled names a digit (the next name's length) may follow. */
            if (strncmp(at, ops[i].token, n) == 0 &&
                !((at[n] >= 'a' && at[n] <= 'z') || (at[n] >= 'A' && at[n] <= 'Z')))
                return ops[i].op;
        }
        return NULL;
    }
    return NULL;
}

char *tsr_format_iso8601(uint64_t realtime_ns, char *buf, size_t cap)
{
    time_t secs = (time_t)(realtime_ns / 1000000000u);
    struct tm tm;
    if (!buf || cap == 0)
        return buf;
    if (!gmtime_r(&secs, &tm)) {
        snprintf(buf, cap, "?");
        return buf;
    }
    snprintf(buf, cap, "%04d-%02d-%02dT%02d:%02d:%02d.%09uZ", tm.tm_year + 1900,
             tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
             (unsigned)(realtime_ns % 1000000000u));
    return buf;
}

const char *tsr_gpu_metric_name(uint16_t metric)
{
    static const char *const t[] = {
        [TSC_GPU_SM_CLOCK_MHZ] = "sm_clock_mhz", [TSC_GPU_MEM_CLOCK_MHZ] = "mem_clock_mhz",
        [TSC_GPU_POWER_MW] = "power_mw", [TSC_GPU_TEMP_C] = "temp_c",
        [TSC_GPU_CLOCK_REASONS] = "clock_reasons", [TSC_GPU_UTIL_PCT] = "util_pct",
        [TSC_GPU_MEM_UTIL_PCT] = "mem_util_pct", [TSC_GPU_MEM_USED_BYTES] = "mem_used_bytes",
        [TSC_GPU_ECC_UNCORRECTED] = "ecc_uncorrected", [TSC_GPU_PCIE_GEN] = "pcie_gen",
        [TSC_GPU_PCIE_GEN_MAX] = "pcie_gen_max", [TSC_GPU_PCIE_WIDTH] = "pcie_width",
        [TSC_GPU_PCIE_WIDTH_MAX] = "pcie_width_max", [TSC_GPU_PCIE_REPLAYS] = "pcie_replays",
        [TSC_GPU_XID_EVENTS] = "xid_events", [TSC_GPU_XID_LAST] = "xid_last",
        [TSC_GPU_NVLINK_ACTIVE] = "nvlink_active", [TSC_GPU_NVLINK_LINKS] = "nvlink_links",
        [TSC_GPU_NVLINK_REPLAYS] = "nvlink_replays",
        [TSC_GPU_NVLINK_RECOVERIES] = "nvlink_recoveries", [TSC_GPU_NVLINK_CRC] = "nvlink_crc",
        [TSC_GPU_RETIRED_PAGES] = "retired_pages", [TSC_GPU_RETIRED_PENDING] = "retired_pending",
        [TSC_GPU_REMAP_CORRECTABLE] = "remapped_rows_correctable",
        [TSC_GPU_REMAP_UNCORRECTABLE] = "remapped_rows_uncorrectable",
        [TSC_GPU_REMAP_STATE] = "remap_state", [TSC_GPU_ECC_CORRECTED_AGG] = "ecc_corrected_agg",
        [TSC_GPU_ECC_UNCORRECTED_AGG] = "ecc_uncorrected_agg",
    };
    return LOOKUP(t, metric);
}

const char *tsr_net_counter_name(uint16_t counter)
{
    static const char *const t[] = {
        [TSC_NET_XMIT_WAIT] = "port_xmit_wait", [TSC_NET_SYMBOL_ERROR] = "symbol_error",
        [TSC_NET_LINK_DOWNED] = "link_downed", [TSC_NET_LINK_RECOVERY] = "link_error_recovery",
        [TSC_NET_RCV_ERRORS] = "port_rcv_errors", [TSC_NET_STATE] = "state",
        [TSC_NET_RATE_MBPS] = "rate_mbps",
    };
    return LOOKUP(t, counter);
}

const char *tsr_task_role_name(uint8_t role)
{
    static const char *const t[] = {
        [TSC_TASK_OTHER] = "other", [TSC_TASK_MAIN] = "main", [TSC_TASK_AUTOGRAD] = "autograd",
        [TSC_TASK_NCCL] = "nccl", [TSC_TASK_WORKER] = "worker", [TSC_TASK_TSCOPE] = "tscope",
    };
    return LOOKUP(t, role);
}

const char *tsr_mem_source_name(uint8_t source)
{
    static const char *const t[] = {"other", "malloc", "async", "vmm", "pool"};
    return LOOKUP(t, source);
}

const char *tsr_mem_pool_op_name(uint8_t op)
{
    static const char *const t[] = {"usage", "created", "destroyed", "trimmed"};
    return LOOKUP(t, op);
}
