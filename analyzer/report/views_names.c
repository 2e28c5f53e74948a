#include "views_names.h"

#include "model/model.h"
#include "tsc_format.h"

/* The table's name: the NCCL function without its "nccl" prefix. */
const char *tsa_views_nccl_op_name(unsigned op)
{
    const char *name = tsc_nccl_op_name(op);
    return name ? name : "op?";
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
        "reduction", "optimizer", "comm", "copy", "conv", "embedding"};
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
