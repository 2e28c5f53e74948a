#include "views_names.h"

#include "model.h"
#include "tsc_format.h"

const char *tsa_views_nccl_op_name(unsigned op)
{
    switch (op) {
    case TSC_NCCL_ALLREDUCE: return "AllReduce";
    case TSC_NCCL_ALLGATHER: return "AllGather";
    case TSC_NCCL_REDUCESCATTER: return "ReduceScatter";
    case TSC_NCCL_BROADCAST: return "Broadcast";
    case TSC_NCCL_BCAST: return "Bcast";
    case TSC_NCCL_REDUCE: return "Reduce";
    case TSC_NCCL_ALLTOALL: return "AlltoAll";
    case TSC_NCCL_GATHER: return "Gather";
    case TSC_NCCL_SCATTER: return "Scatter";
    case TSC_NCCL_SEND: return "Send";
    case TSC_NCCL_RECV: return "Recv";
    case TSC_NCCL_GROUP_START: return "GroupStart";
    case TSC_NCCL_GROUP_END: return "GroupEnd";
    case TSC_NCCL_COMM_INIT_RANK: return "CommInitRank";
    case TSC_NCCL_COMM_INIT_RANK_CONFIG: return "CommInitRankConfig";
    case TSC_NCCL_COMM_INIT_RANK_SCALABLE: return "CommInitRankScalable";
    case TSC_NCCL_COMM_INIT_ALL: return "CommInitAll";
    case TSC_NCCL_COMM_SPLIT: return "CommSplit";
    case TSC_NCCL_COMM_SHRINK: return "CommShrink";
    case TSC_NCCL_COMM_FINALIZE: return "CommFinalize";
    case TSC_NCCL_COMM_DESTROY: return "CommDestroy";
    case TSC_NCCL_COMM_ABORT: return "CommAbort";
    default: return "op?";
    }
}

const char *tsa_views_phase_name(unsigned p)
{
    static const char *names[TSA_PHASE_COUNT] = {
        "unknown", "data", "forward", "backward", "optimizer", "comm", "idle", "other"};
    return p < TSA_PHASE_COUNT ? names[p] : "unknown";
}

const char *tsa_views_kcat_name(unsigned k)
{
    static const char *names[TSA_KCAT_COUNT] = {
        "other", "gemm", "attention", "elementwise", "norm",
        "reduction", "optimizer", "comm", "copy"};
    return k < TSA_KCAT_COUNT ? names[k] : "other";
}

const char *tsa_views_copy_name(unsigned d)
{
    switch (d) {
    case TSA_COPY_H2D: return "Memcpy HtoD";
    case TSA_COPY_D2H: return "Memcpy DtoH";
    case TSA_COPY_D2D: return "Memcpy DtoD";
    case TSA_COPY_P2P: return "Memcpy PtoP";
    case TSA_COPY_H2H: return "Memcpy HtoH";
    case TSA_COPY_MEMSET: return "Memset";
    default: return "Memcpy";
    }
}

const char *tsa_views_sync_name(unsigned k)
{
    switch (k) {
    case TSA_SYNC_STREAM: return "StreamSynchronize";
    case TSA_SYNC_EVENT: return "EventSynchronize";
    case TSA_SYNC_CONTEXT: return "ContextSynchronize";
    case TSA_SYNC_DEVICE: return "DeviceSynchronize";
    case TSA_SYNC_STREAM_WAIT_EVENT: return "StreamWaitEvent";
    default: return "Synchronize";
    }
}
