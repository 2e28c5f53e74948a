/* The stand-in's device model: one context per device, streams with a
 * timeline each, a bounded launch queue, and captured graphs.
 *
 * Work is timed when it is queued: it starts when the stream is free (and
 * not before a launch latency has passed) and lasts what the caller says.
 * Nothing computes; host "device memory" is plain memory.  A stream with
 * SIM_QUEUE_DEPTH unfinished items makes the next launch wait, as a real
 * driver's full push buffer does.
 */
#ifndef SIM_GPU_H
#define SIM_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "sim_seam.h"

#define SIM_QUEUE_DEPTH 1024
#define SIM_LAUNCH_LATENCY_NS 1500u   /* host call to earliest device start */
#define SIM_COPY_BYTES_PER_US 25000u  /* 25 GB/s */
#define SIM_MAX_STREAMS 64
#define SIM_MAX_GRAPH_NODES 4096

typedef struct sim_function {
    const char *name;              /* mangled device name */
} sim_function;

/* One captured node of a graph: a kernel launch with its arguments. */
typedef struct sim_node {
    const sim_function *fn;
    int32_t grid[3], block[3];
    int32_t smem;
    uint64_t dur_ns;
    uint64_t id;
} sim_node;

typedef struct sim_graph {
    uint32_t id;
    size_t n;
    sim_node nodes[SIM_MAX_GRAPH_NODES];
} sim_graph;

/* Stream handle <-> index (0 is the default stream). */
int sim_stream_index(CUstream s);
CUstream sim_stream_create(void);

/* Time `dur_ns` of work on a stream now: fills w->start/end (realtime).
 * Waits while the stream's queue is full. */
void sim_gpu_place(int stream, uint64_t dur_ns, sim_work *w);

/* Block until the stream (or every stream, stream < 0) is idle. */
void sim_gpu_wait(int stream);

/* Capture: while a stream captures, launches become nodes of its graph. */
int sim_capture_begin(int stream);
sim_graph *sim_capture_target(int stream);
sim_graph *sim_capture_end(int stream);

/* Ids as CUPTI reports them. */
uint32_t sim_cupti_stream_id(int stream);
uint32_t sim_next_graph_id(void);
uint64_t sim_next_node_id(void);

void sim_sleep_until(uint64_t realtime_ns);

#endif
