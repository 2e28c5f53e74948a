/* Folding each kernel into the call that launched it.
 *
 * CUPTI reports one launch up to three times: the runtime call, the driver
 * call nested in it, and the kernel, in two queues (calls in a global one,
 * kernels per context) whose buffers come back in any order.  Written as
 * they come that is three records for one kernel; folded it is one
 * (TSC_EV_KERNEL_LAUNCH).  The fold keeps whichever half arrives first
 * until the other one comes:
 *  - a call is matched to its kernel by correlation id; a graph launch's
 *    id is shared by all the graph's kernels, so it stays to fold them all;
 *  - a launch call that spans the previous launch call of its thread is
 *    the outer call of a nested pair (runtime around driver, with the same
 *    correlation id or, in older CUPTIs, another one): the pair is one
 *    call with the outer span and the outer call's name;
 *  - calls are matched only when the buffer that brought them is done
 *    (tsc_fold_settle), so both calls of a pair are known first;
 *  - what found no partner for two periods (tsc_fold_age) is given up:
 *    a kernel alone, a call "whose kernel never came", and the call's
 *    external correlation record, which the analyzer then needs.
 * Memory is bounded: the tables of waiting calls and kernels grow with
 * what waits, up to a cap; full at the cap, what waited longest is given
 * up at once.  Pure: no CUPTI, no recorder; what to write goes through
 * the callbacks.
 */
#ifndef TSC_LAUNCH_FOLD_H
#define TSC_LAUNCH_FOLD_H

#include <stddef.h>
#include <stdint.h>

#include "activity_xlate.h"

typedef struct tsc_fold_call {
    uint32_t corr, tid, cbid;
    uint8_t domain;            /* enum tsc_api_domain */
    uint8_t graph;             /* a graph launch: every graph kernel carries its id */
    uint64_t start, end;
    const char *name;          /* static (the cbid table) */
} tsc_fold_call;

typedef struct tsc_fold_actions {
    void *ctx;
    void (*both)(void *ctx, const tsc_kernel_rec *kernel, const tsc_fold_call *call);
    void (*kernel_alone)(void *ctx, const tsc_kernel_rec *kernel);
    void (*call_alone)(void *ctx, const tsc_fold_call *call);
    void (*extcorr)(void *ctx, uint32_t corr, uint64_t external_id, uint8_t kind);
} tsc_fold_actions;

typedef struct tsc_fold_stats {
    uint64_t folded;           /* kernels written with their call */
    uint64_t kernels_alone;    /* kernels whose call never came */
    uint64_t calls_alone;      /* calls whose kernel never came */
    uint64_t nested;           /* outer calls merged into their nested call */
    uint64_t pushed_out;       /* entries given up early, the tables full at their cap */
    uint64_t table_bytes;      /* memory its tables hold now (they never shrink) */
} tsc_fold_stats;

typedef struct tsc_fold tsc_fold;

/* Tables that grow up to 2^max_log2 slots each.  NULL: no memory. */
tsc_fold *tsc_fold_new(unsigned max_log2);
void tsc_fold_free(tsc_fold *f);

/* 1: a call's external correlation record is dropped once its kernel is
 * folded (the analyzer joins by thread and time instead); 0: kept.  Only
 * safe while CUPTI's clock is tscope's. */
void tsc_fold_set_ext_redundant(tsc_fold *f, int redundant);

void tsc_fold_add_kernel(tsc_fold *f, const tsc_kernel_rec *kernel, const tsc_fold_actions *a);
void tsc_fold_add_call(tsc_fold *f, const tsc_fold_call *call, const tsc_fold_actions *a);
void tsc_fold_add_ext(tsc_fold *f, uint32_t corr, uint64_t external_id, uint8_t kind,
                  const tsc_fold_actions *a);
/* The end of a buffer: calls it brought meet kernels already waiting. */
void tsc_fold_settle(tsc_fold *f, const tsc_fold_actions *a);
/* One period passed. */
void tsc_fold_age(tsc_fold *f, const tsc_fold_actions *a);
/* Everything out (the final flush). */
void tsc_fold_drain(tsc_fold *f, const tsc_fold_actions *a);

tsc_fold_stats tsc_fold_get_stats(const tsc_fold *f);

#endif
