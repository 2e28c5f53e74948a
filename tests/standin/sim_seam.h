/* The seam between the stand-in driver (libcuda.so.1) and the stand-in
 * CUPTI (libcupti.so.13).
 *
 * The real CUPTI reaches into the driver through private interfaces; here
 * the driver exports one function, sim_driver_attach, and the CUPTI
 * stand-in hands it a table of hooks when it is loaded.  Before that (a
 * process that never loads CUPTI) the driver profiles nothing, as a real
 * one does.  Tests only: none of this is installed.
 */
#ifndef SIM_SEAM_H
#define SIM_SEAM_H

#include <stdint.h>

#include <cuda.h>
#include <cupti.h>

/* One driver or runtime call as the profiler sees it. */
typedef struct sim_call {
    CUpti_CallbackDomain domain;   /* DRIVER_API or RUNTIME_API */
    CUpti_CallbackId cbid;
    const char *name;              /* as CUPTI reports it, with its _vNNNN suffix */
    const void *params;            /* the call's cu*_params / cuda*_params, or NULL */
    CUcontext ctx;
    /* Filled by the profiler on entry. */
    uint64_t start;
    uint32_t corr;
    uint32_t depth;                /* 0: the outermost call on its thread */
    uint64_t corr_data;            /* CUpti_CallbackData.correlationData */
} sim_call;

enum sim_work_kind { SIM_WORK_KERNEL = 1, SIM_WORK_MEMCPY = 2, SIM_WORK_MEMSET = 3 };

/* One piece of device work, fully timed when it is queued (the device
 * model knows when it will run): its activity record becomes available
 * once the realtime clock passes `end`. */
typedef struct sim_work {
    uint8_t kind;                  /* enum sim_work_kind */
    uint8_t copy_kind, src_kind, dst_kind; /* CUpti_ActivityMemcpyKind / MemoryKind */
    const char *name;              /* kernel (static storage) */
    CUcontext ctx;
    uint32_t device, context, stream;
    int32_t grid[3], block[3];
    int32_t static_smem, dynamic_smem;
    uint32_t corr;
    uint32_t graph_id;
    uint64_t graph_node;
    uint64_t bytes;
    uint64_t start, end;           /* realtime ns */
} sim_work;

typedef struct sim_prof_ops {
    void (*api_enter)(sim_call *c);
    void (*api_exit)(sim_call *c, int status);
    void (*work)(const sim_work *w);
    /* A synchronisation call that waited from t0 to t1 (realtime ns). */
    void (*sync)(const sim_call *c, CUpti_ActivitySynchronizationType type, uint32_t context,
                 uint32_t stream, uint64_t t0, uint64_t t1);
    void (*context_created)(CUcontext ctx, uint32_t device);
    /* A graph node was captured on this thread (inside the launch call). */
    void (*graph_node)(const sim_call *c, uint32_t graph_id, uint64_t node_id);
} sim_prof_ops;

/* Exported by the stand-in driver. */
void sim_driver_attach(const sim_prof_ops *ops);
/* The attached hooks, or NULL (the runtime reports its calls through them). */
const sim_prof_ops *sim_driver_prof(void);
uint64_t sim_realtime_ns(void);
/* The id CUPTI reports for a context. */
uint32_t sim_context_id(CUcontext ctx);

#endif
