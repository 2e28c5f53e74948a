/* Black-box mode's step tracker: finds steps in the records the writer
 * drains (no work on the application's threads), sums each step into a
 * tsc_step_summary and flags steps slower than k times the rolling median.
 *
 * A step ends when the "opener" returns: the first NCCL collective or
 * point-to-point call signature (operation, communicator, size) issued
 * outside a group, or ncclGroupEnd of a group of the same calls, that this
 * rank issues a second time (calls inside a group return before they
 * communicate; GroupEnd is where the group waits, and two groups of other
 * calls in one step are two signatures).  Every rank of a
 * synchronous job leaves that call together, and its sequence number is
 * the same on every rank, so step numbers agree across ranks and a step
 * range can be translated through the opener's sequence number. */
#ifndef TSC_BB_STEPS_H
#define TSC_BB_STEPS_H

#include <stddef.h>
#include <stdint.h>

#include "tsc_format.h"
#include "tsc_nccl_ops.h"
#include "tsc_peaks.h"

typedef struct bb_sig bb_sig;     /* one call signature */
typedef struct bb_dinfo bb_dinfo; /* one NCCL descriptor id */

#define BB_GROUP_THREADS 16

/* What a step's records give besides its summary (kept beside the
 * summary ring, handed out with it; written to the summary file as
 * tsc_step_extra records by bb_steps_extra_records). */
typedef struct bb_step_extra {
    uint64_t gemm_flops;      /* FLOPs of the cuBLAS GEMM calls that started in it */
    uint64_t gemm_peak_ns;    /* the time those GEMMs take at the device's peak */
    uint64_t data_stall_ns;   /* GPU idle before its first host-to-device copy (bb_stall.h) */
    uint32_t h2d_copies;      /* host-to-device copies that started in it (bb_stall.h) */
    uint32_t gemm_no_peak;    /* its GEMMs whose precision has no known peak */
} bb_step_extra;

typedef struct bb_steps {
    /* Per thread: a hash of the calls of its open group (GroupEnd's
     * signature is the group's content). */
    uint32_t group_tid[BB_GROUP_THREADS];
    uint64_t group_key[BB_GROUP_THREADS];
    tsc_step_summary *ring;   /* steps [closed - kept, closed]: the last one is open */
    bb_step_extra *extra;     /* beside ring, same index */
    uint64_t mask;
    uint64_t closed;          /* steps ended so far (the open step's number) */
    uint64_t written;         /* steps handed out by bb_steps_pop */
    int have_opener, opener_sequenced;
    uint64_t opener_key;
    uint64_t first_ns;        /* the first record's start */
    bb_dinfo *desc;           /* descriptor id -> signature, bytes */
    size_t desc_cap, ndesc;
    bb_sig *sig;              /* signature -> end of its first call */
    size_t sig_cap, nsig;
    uint64_t *durs;           /* the last `window` step times, for the median */
    uint32_t window, ndurs, k_pct, need_run, run;
    uint64_t dropped_total, dropped_at_open;
    /* Every collective and point-to-point call drained, by op code (also
     * those outside summarized steps). */
    uint64_t op_calls[TSC_NCCL_STEP_OP_LIMIT], op_bytes[TSC_NCCL_STEP_OP_LIMIT];
    uint64_t gpu_copies, gemms; /* GPU copy and GEMM records drained: 0 = none captured */
    double peak_flops[TSC_PREC_COUNT]; /* the device's peak by precision, 0 unknown */
    int peak_known;           /* some precision has a peak: the device is known */
    /* The oldest anomaly not yet taken by the caller: the run's first and
     * last step, the last one's time and the median it was compared with
     * (pending = 1). */
    int anomaly_pending;
    uint64_t anomaly_step, anomaly_last, anomaly_ns, anomaly_median_ns;
} bb_steps;

/* keep: steps remembered (their bounds, for windows); window, k_pct and
 * run: the anomaly rule (run steps in a row slower than k_pct/100 times
 * the median of the last window steps).  0, or -1 without memory. */
int bb_steps_init(bb_steps *t, uint32_t keep, uint32_t window, uint32_t k_pct, uint32_t run);
void bb_steps_free(bb_steps *t);

/* Feed one drained run of thread tid's slots (descriptors and events). */
void bb_steps_take(bb_steps *t, uint32_t tid, const tsc_event *slots, size_t n);

/* The records dropped so far (full rings), for the per-step count. */
static inline void bb_steps_set_dropped(bb_steps *t, uint64_t total) { t->dropped_total = total; }

/* Steps ended and not handed out yet. */
static inline uint64_t bb_steps_backlog(const bb_steps *t) { return t->closed - t->written; }

/* Up to max summaries of steps that ended before before_ns and were not
 * handed out yet, oldest first, with their extras (extra may be NULL; 0
 * for steps 0 and 1, which carry times only).  Returns the count. */
size_t bb_steps_pop(bb_steps *t, uint64_t before_ns, tsc_step_summary *out,
                    bb_step_extra *extra, size_t max);

/* The file's form of popped steps s[0..n-1] and their extras x: into out
 * (room for n), a record for each step with something measured (the
 * flags say what: a data stall once CUPTI copies were captured, FLOPs once
 * GEMMs were, their time at peak when the device's peak covers them all).
 * Returns the count. */
size_t bb_steps_extra_records(const bb_steps *t, const tsc_step_summary *s,
                              const bb_step_extra *x, size_t n, tsc_step_extra *out);

/* The direction (enum tsc_copy_dir) of copy descriptor desc, or -1. */
int bb_steps_copy_dir(const bb_steps *t, uint32_t desc);

/* The device is known: its peak FLOP/s per precision (format/tsc_peaks.h),
 * for the GEMMs drained from now on. */
void bb_steps_set_device(bb_steps *t, const char *device_name);

/* Bounds of step `step` when still remembered: 0 and *lo_ns, *hi_ns
 * (hi_ns = UINT64_MAX for the open step), else -1. */
int bb_steps_bounds(const bb_steps *t, uint64_t step, uint64_t *lo_ns, uint64_t *hi_ns);

/* The step whose opener has sequence number seq, or -1 if not remembered. */
long long bb_steps_by_seq(const bb_steps *t, uint64_t seq);

/* The opener's sequence number of a remembered closed step, or -1. */
long long bb_steps_seq(const bb_steps *t, uint64_t step);

/* The oldest step still remembered. */
static inline uint64_t bb_steps_oldest(const bb_steps *t)
{
    return t->closed > t->mask ? t->closed - t->mask : 0;
}

#endif
