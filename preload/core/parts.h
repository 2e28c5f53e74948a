/* The optional parts of the capture (the GPU part, the NCCL wrappers, the
 * NCCL profiler plugin, telemetry, the process's own handlers) as the core
 * knows them: each part fills one tsc_part, process/parts.c registers them
 * all at start-up, and the core calls every registered part, in
 * registration order, at each moment below.  A part leaves a moment it has
 * no business in NULL.  Parts never call each other: what one part knows
 * of a call and another needs (an NCCL call in progress, the communicator
 * being initialised) goes through the core (the tsc_parts_* calls below).
 *
 * Black-box mode is not a part but the other sink of the recorder's
 * records (sink.h). */
#ifndef TSC_PARTS_H
#define TSC_PARTS_H

#include <stddef.h>
#include <stdint.h>

#include "tsc_format.h"
#include "tsc_tls.h"

typedef struct tsc_part {
    const char *name;
    /* Library constructor, after the configuration was read and only when
     * recording is not disabled: may read and set the environment (CUPTI's
     * injection path, the NCCL plugin's variable); no CUDA call. */
    void (*activate)(void);
    /* Inside the recorder's set-up, the dump open, before the writer
     * thread starts (signal handlers). */
    void (*setup)(void);
    /* Once the recorder is active (threads that sample). */
    void (*start)(void);
    /* Before a flush of the recorder's buffers (periodic, exit, signal):
     * hand over what the part buffers.  from_signal 1: from a signal
     * handler, async-signal-safe work only. */
    void (*flush)(int from_signal);
    /* On the thread draining the recorder, drain lock held, never from a
     * signal handler: records the part buffers into the record streams. */
    void (*drain)(void);
    /* After the threads' records on every drain: records the part makes
     * from its own state (cap at most, each with its thread in tids[]);
     * atomics only, safe in a signal handler.  Returns how many. */
    size_t (*own_records)(uint64_t now, tsc_event *out, uint32_t *tids, size_t cap);
    /* Before each META chunk is encoded (not from a signal): the part's
     * metadata keys (tsc_rec_meta). */
    void (*meta)(void);
    /* At process exit, before the final flush: stop. */
    void (*exit)(void);
    /* In the child of a fork: the parent's threads did not come along. */
    void (*fork_child)(void);
    /* At exit, after the final flush: 1 when the part watched the whole
     * process and saw it do no device work (a helper that only queried
     * CUDA); 0 when it cannot tell. */
    int (*saw_no_device_work)(void);
    /* Around an NCCL call that launches GPU work: push a correlation id
     * for the kernels it launches (1 when pushed), pop it after. */
    int (*push_corr)(uint64_t id);
    void (*pop_corr)(void);
    /* A communicator was created (after ncclCommInit* returned). */
    void (*comm_created)(void);
} tsc_part;

/* At start-up (process/parts.c), before any recording: at most
 * TSC_PARTS_MAX parts (more are ignored; process/parts.c asserts its list
 * fits).  Not thread safe; never after start-up. */
#define TSC_PARTS_MAX 8
void tsc_parts_register(const tsc_part *part);

/* The moments, each calling every registered part that has it. */
void tsc_parts_activate(void);
void tsc_parts_setup(void);
void tsc_parts_start(void);
void tsc_parts_flush(int from_signal);
void tsc_parts_drain(void);
int tsc_parts_have_drain(void);
size_t tsc_parts_own_records(uint64_t now, tsc_event *out, uint32_t *tids, size_t cap);
void tsc_parts_meta(void);
void tsc_parts_exit(void);
void tsc_parts_fork_child(void);
int tsc_parts_saw_no_device_work(void);
/* Around an NCCL call (its hot path, hence inline): the first registered
 * part that pushes correlation ids; pop only when push returned 1. */
extern int (*tsc_parts_push_corr_fn)(uint64_t id);
extern void (*tsc_parts_pop_corr_fn)(void);
static inline int tsc_parts_push_corr(uint64_t id)
{
    return tsc_parts_push_corr_fn ? tsc_parts_push_corr_fn(id) : 0;
}
static inline void tsc_parts_pop_corr(void)
{
    if (tsc_parts_pop_corr_fn)
        tsc_parts_pop_corr_fn();
}
void tsc_parts_comm_created(void);

/* Per-call state that one part sets and another reads, this thread's only
 * (a TLS variable each: they are read on every intercepted call). */
/* Nonzero while this thread is inside one of the NCCL wrappers (memory
 * mapped then is NCCL's); set by the NCCL part, read by the GPU part. */
extern TSC_TLS int tsc_call_in_nccl;
/* The communicator an ncclCommInit* call in progress on this thread
 * creates (0: none); set by the NCCL part, read by the NCCL profiler
 * plugin, which NCCL initialises inside that call. */
extern TSC_TLS uint64_t tsc_call_init_comm;

#endif
