/* Step tracker of black-box mode: see bb_steps.h. */
#include "bb_steps.h"

#include <stdlib.h>
#include <string.h>

#include "dump_file.h"
#include "tsc_nccl_ops.h"

struct bb_dinfo {
    uint32_t id;        /* 0 = empty */
    uint8_t type;       /* TSC_DESC_NCCL_CALL, _GEMM or _COPY */
    uint8_t counted;    /* may open steps: a collective, point-to-point or GroupEnd call */
    uint8_t sequenced;  /* its calls have sequence numbers (not GroupEnd) */
    uint8_t op;         /* NCCL op code; GEMM: precision; copy: direction */
    uint64_t key;
    uint64_t bytes;     /* NCCL: message bytes; GEMM: FLOPs */
};

struct bb_sig {
    uint64_t key;       /* 0 = empty */
    uint64_t first_end, first_seq;
};

#define MAX_TABLE (1u << 20) /* entries: past this, new signatures are not tracked */

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

int bb_steps_init(bb_steps *t, uint32_t keep, uint32_t window, uint32_t k_pct, uint32_t run)
{
    memset(t, 0, sizeof *t);
    /* Room for the summaries of a flush period of short steps, too. */
    uint64_t cap = 8192;
    while (cap < (uint64_t)keep + 2)
        cap *= 2;
    t->ring = calloc(cap, sizeof *t->ring);
    t->extra = calloc(cap, sizeof *t->extra);
    t->durs = calloc(window, sizeof *t->durs);
    t->desc_cap = t->sig_cap = 1024;
    t->desc = calloc(t->desc_cap, sizeof *t->desc);
    t->sig = calloc(t->sig_cap, sizeof *t->sig);
    if (!t->ring || !t->extra || !t->durs || !t->desc || !t->sig) {
        bb_steps_free(t);
        return -1;
    }
    t->mask = cap - 1;
    t->window = window;
    t->k_pct = k_pct;
    t->need_run = run ? run : 1;
    return 0;
}

void bb_steps_free(bb_steps *t)
{
    free(t->ring);
    free(t->extra);
    free(t->durs);
    free(t->desc);
    free(t->sig);
    memset(t, 0, sizeof *t);
}

/* Open addressing on power-of-two tables; the caller grows them at half
 * full.  Returns the entry for key (empty if absent). */
#define FIND(tab, cap, field, k)                                                          \
    ({                                                                                    \
        size_t i_ = (size_t)mix(0, (k)) & ((cap) - 1);                                    \
        while ((tab)[i_].field && (tab)[i_].field != (k))                                 \
            i_ = (i_ + 1) & ((cap) - 1);                                                  \
        &(tab)[i_];                                                                       \
    })

/* Double a table at half full (up to MAX_TABLE entries), re-placing its
 * entries.  0, or -1 when it may not or cannot grow. */
#define GROW(tab, cap, n, field)                                                          \
    ({                                                                                    \
        int rc_ = 0;                                                                      \
        if ((n) * 2 >= (cap)) {                                                           \
            __typeof__(tab) nt_ = (cap) < MAX_TABLE ? calloc((cap) * 2, sizeof *nt_) : NULL; \
            if (!nt_) {                                                                   \
                rc_ = -1;                                                                 \
            } else {                                                                      \
                for (size_t i = 0; i < (cap); i++)                                        \
                    if ((tab)[i].field)                                                   \
                        *FIND(nt_, (cap) * 2, field, (tab)[i].field) = (tab)[i];          \
                free(tab);                                                                \
                (tab) = nt_;                                                              \
                (cap) *= 2;                                                               \
            }                                                                             \
        }                                                                                 \
        rc_;                                                                              \
    })

static int grow_desc(bb_steps *t) { return GROW(t->desc, t->desc_cap, t->ndesc, id); }

static int grow_sig(bb_steps *t) { return GROW(t->sig, t->sig_cap, t->nsig, key); }

/* The payload of descriptor slot h as a struct of `size` bytes (the
 * payload runs on from the head slot into the ones after it), or -1. */
static int desc_payload(const tsc_desc_head *h, size_t nslots, void *out, size_t size)
{
    if (h->payload_len < size || nslots < tsc_desc_slots(h->payload_len))
        return -1;
    memcpy(out, h->payload, size);
    return 0;
}

/* Remembers what the step tracker needs of NCCL call, GEMM and copy
 * descriptors. */
static void learn_desc(bb_steps *t, const tsc_event *slot, size_t nslots)
{
    const tsc_desc_head *h = (const tsc_desc_head *)slot;
    bb_dinfo n = {.id = h->id, .type = h->type};
    tsc_desc_nccl_call c;
    tsc_desc_gemm g;
    tsc_desc_copy cp;
    if (h->type == TSC_DESC_NCCL_CALL && desc_payload(h, nslots, &c, sizeof c) == 0) {
        uint64_t key = mix(mix(mix(mix(c.op, c.dtype), c.count), c.comm_id), (uint32_t)c.peer);
        int seqd = tsc_nccl_op_is_sequenced(c.op);
        n.counted = seqd || c.op == TSC_NCCL_GROUP_END;
        n.sequenced = (uint8_t)seqd;
        n.op = c.op < TSC_NCCL_STEP_OP_LIMIT ? (uint8_t)c.op : 0;
        n.key = key | 1;
        n.bytes = c.bytes;
    } else if (h->type == TSC_DESC_GEMM && desc_payload(h, nslots, &g, sizeof g) == 0) {
        n.op = (uint8_t)tsc_gemm_precision(g.a_type, g.compute_type);
        n.bytes = g.flops;
    } else if (h->type == TSC_DESC_COPY && desc_payload(h, nslots, &cp, sizeof cp) == 0) {
        n.op = cp.dir;
    } else {
        return;
    }
    if (h->id == 0 || grow_desc(t) < 0)
        return;
    bb_dinfo *d = FIND(t->desc, t->desc_cap, id, h->id);
    if (!d->id)
        t->ndesc++;
    *d = n;
}

void bb_steps_set_device(bb_steps *t, const char *device_name)
{
    t->peak_known = 0;
    for (int p = 0; p < TSC_PREC_COUNT; p++) {
        t->peak_flops[p] = tsc_peak_flops(device_name, p, NULL);
        t->peak_known |= t->peak_flops[p] > 0;
    }
}

static tsc_step_summary *step_at(bb_steps *t, uint64_t step) { return &t->ring[step & t->mask]; }

static bb_step_extra *extra_at(bb_steps *t, uint64_t step) { return &t->extra[step & t->mask]; }

/* The remembered step (not handed out yet) an event that started at ns
 * belongs to, or -1. */
static long long step_index(bb_steps *t, uint64_t ns)
{
    if (!t->have_opener)
        return -1;
    if (ns > step_at(t, t->closed)->start_ns)
        return (long long)t->closed;
    uint64_t lo = bb_steps_oldest(t), hi = t->closed; /* steps lo..hi-1 are closed */
    if (lo >= hi || ns <= step_at(t, lo)->start_ns)
        return -1;
    while (hi - lo > 1) { /* step lo starts before ns; find the last such */
        uint64_t mid = lo + (hi - lo) / 2;
        if (step_at(t, mid)->start_ns < ns)
            lo = mid;
        else
            hi = mid;
    }
    return lo >= t->written ? (long long)lo : -1;
}

static tsc_step_summary *step_of(bb_steps *t, uint64_t ns)
{
    long long k = step_index(t, ns);
    return k < 0 ? NULL : step_at(t, (uint64_t)k);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void check_anomaly(bb_steps *t, tsc_step_summary *s)
{
    uint64_t dur = s->end_ns - s->start_ns;
    /* A full window first: the first steps of a job (warm-up, compilation)
     * are no baseline. */
    if (t->ndurs >= t->window) {
        uint32_t n = t->ndurs < t->window ? t->ndurs : t->window;
        uint64_t sorted[1000];
        memcpy(sorted, t->durs, n * sizeof *sorted);
        qsort(sorted, n, sizeof *sorted, cmp_u64);
        uint64_t med = sorted[n / 2];
        if (med && dur * 100 > med * t->k_pct) {
            s->flags |= TSC_STEP_F_ANOMALY;
            if (++t->run == t->need_run && !t->anomaly_pending) {
                t->anomaly_pending = 1;
                t->anomaly_step = s->step + 1 - t->need_run; /* the run's first step */
                t->anomaly_last = s->step;
                t->anomaly_ns = dur;
                t->anomaly_median_ns = med;
            }
        } else {
            t->run = 0;
        }
    }
    t->durs[t->ndurs++ % t->window] = dur;
    if (t->ndurs >= 2 * t->window)
        t->ndurs -= t->window; /* keeps the count bounded, the position modulo window */
}

/* The opener returned at end_ns with sequence number seq: step `closed`
 * ends, the next one opens. */
static void close_step(bb_steps *t, uint64_t end_ns, uint64_t seq)
{
    tsc_step_summary *s = step_at(t, t->closed);
    s->end_ns = end_ns;
    s->opener_seq = seq;
    s->dropped = (uint32_t)(t->dropped_total - t->dropped_at_open);
    t->dropped_at_open = t->dropped_total;
    if (t->closed > 0)
        check_anomaly(t, s);
    t->closed++;
    if (t->closed - t->written > t->mask)
        t->written = t->closed - t->mask; /* not popped in time: lost from the summary file */
    *step_at(t, t->closed) = (tsc_step_summary){.step = t->closed, .start_ns = end_ns};
    *extra_at(t, t->closed) = (bb_step_extra){0};
}

/* The slot of thread tid's open-group hash (a small table: threads beyond
 * it share the last slot, which at worst merges their groups' keys). */
static uint64_t *group_of(bb_steps *t, uint32_t tid)
{
    for (int i = 0; i < BB_GROUP_THREADS; i++)
        if (t->group_tid[i] == tid || !t->group_tid[i]) {
            t->group_tid[i] = tid;
            return &t->group_key[i];
        }
    return &t->group_key[BB_GROUP_THREADS - 1];
}

static void on_nccl(bb_steps *t, uint32_t tid, const tsc_event *e)
{
    bb_dinfo *d = FIND(t->desc, t->desc_cap, id, e->desc);
    tsc_step_summary *s = step_of(t, e->start_ns);
    if (s) {
        s->nccl_calls++;
        s->nccl_ns += e->end_ns > e->start_ns ? e->end_ns - e->start_ns : 0;
        s->nccl_bytes += d->id ? d->bytes : 0;
    }
    if (d->id && d->sequenced && d->op) {
        t->op_calls[d->op]++;
        t->op_bytes[d->op] += d->bytes;
    }
    if (!d->id || !d->counted)
        return;
    uint64_t key = d->key;
    uint64_t *group = group_of(t, tid);
    if (d->sequenced && (e->flags & TSC_NCCL_F_IN_GROUP)) {
        *group = mix(*group, d->key);
        return;
    }
    if (!d->sequenced) { /* GroupEnd: what the group held */
        key = mix(key, *group) | 1;
        *group = 0;
    }
    if (t->have_opener) {
        if (key == t->opener_key)
            close_step(t, e->end_ns, e->val);
        return;
    }
    if (grow_sig(t) < 0)
        return;
    bb_sig *g = FIND(t->sig, t->sig_cap, key, key);
    if (!g->key) {
        g->key = key;
        g->first_end = e->end_ns;
        g->first_seq = e->val;
        t->nsig++;
        return;
    }
    /* The first signature seen twice: its first return ended step 0. */
    t->have_opener = 1;
    t->opener_key = key;
    t->opener_sequenced = d->sequenced;
    *step_at(t, 0) = (tsc_step_summary){.step = 0, .start_ns = t->first_ns};
    *extra_at(t, 0) = (bb_step_extra){0};
    close_step(t, g->first_end, g->first_seq);
    close_step(t, e->end_ns, e->val);
}

/* A cuBLAS GEMM call (host record) that started in step k (-1: none):
 * its FLOPs, and the time they take at the device's peak. */
static void on_gemm(bb_steps *t, long long k, const tsc_event *e)
{
    bb_dinfo *d = FIND(t->desc, t->desc_cap, id, e->desc);
    if (!d->id || d->type != TSC_DESC_GEMM)
        return;
    t->gemms++;
    if (k < 0)
        return;
    bb_step_extra *x = extra_at(t, (uint64_t)k);
    x->gemm_flops += d->bytes;
    double peak = t->peak_flops[d->op < TSC_PREC_COUNT ? d->op : 0];
    if (peak > 0)
        x->gemm_peak_ns += (uint64_t)((double)d->bytes / peak * 1e9 + 0.5);
    else
        x->gemm_no_peak++;
}

/* A kernel or copy on the GPU (CUPTI record, GPU start in start_ns) that
 * started in step k (-1: none): kernel time adds to the step's GPU busy
 * time.  (The data stall needs the records in GPU order, which draining
 * does not give: bb_stall.c finds it when the step is summarized.) */
static void on_gpu_work(bb_steps *t, long long k, const tsc_event *e)
{
    int copy = e->kind == TSC_EV_MEMCPY || e->kind == TSC_EV_MEMSET;
    t->gpu_copies += copy;
    if (k < 0 || copy)
        return;
    uint64_t d = e->kind == TSC_EV_KERNEL_LAUNCH ? TSC_LO32(e->end_ns) /* the GPU duration */
                 : e->end_ns > e->start_ns       ? e->end_ns - e->start_ns
                                                 : 0;
    step_at(t, (uint64_t)k)->gpu_busy_ns += d;
}

int bb_steps_copy_dir(const bb_steps *t, uint32_t desc)
{
    bb_dinfo *d = FIND(t->desc, t->desc_cap, id, desc);
    return d->id && d->type == TSC_DESC_COPY ? d->op : -1;
}

void bb_steps_take(bb_steps *t, uint32_t tid, const tsc_event *slots, size_t n)
{
    for (size_t i = 0; i < n;) {
        const tsc_event *e = &slots[i];
        if (e->kind == TSC_EV_DESC) {
            size_t w = tsc_desc_slots(((const tsc_desc_head *)e)->payload_len);
            learn_desc(t, e, n - i);
            i += w;
            continue;
        }
        i++;
        if (!tsc_event_has_times(e->kind))
            continue; /* durations (an NCCL plugin proxy op's), not times: no step */
        if (!t->first_ns || (e->start_ns && e->start_ns < t->first_ns))
            t->first_ns = e->start_ns;
        if (e->kind == TSC_EV_NCCL) {
            on_nccl(t, tid, e);
            continue;
        }
        long long k = step_index(t, e->start_ns);
        if (e->kind == TSC_EV_GEMM)
            on_gemm(t, k, e);
        else if (e->kind == TSC_EV_KERNEL || e->kind == TSC_EV_KERNEL_LAUNCH ||
                 e->kind == TSC_EV_MEMCPY || e->kind == TSC_EV_MEMSET)
            on_gpu_work(t, k, e);
        if (k >= 0)
            step_at(t, (uint64_t)k)->events++;
    }
}

size_t bb_steps_pop(bb_steps *t, uint64_t before_ns, tsc_step_summary *out,
                    bb_step_extra *extra, size_t max)
{
    size_t k = 0;
    for (; k < max && t->written < t->closed && step_at(t, t->written)->end_ns < before_ns; k++) {
        if (extra) /* steps 0 and 1: what came before the opener is not in them */
            extra[k] = t->written < 2 ? (bb_step_extra){0} : *extra_at(t, t->written);
        out[k] = *step_at(t, t->written++);
    }
    return k;
}

size_t bb_steps_extra_records(const bb_steps *t, const tsc_step_summary *s,
                              const bb_step_extra *x, size_t n, tsc_step_extra *out)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i].step < 2)
            continue; /* times only */
        uint16_t flags = (t->gpu_copies ? TSC_STEP_X_STALL : 0) | (t->gemms ? TSC_STEP_X_GEMM : 0);
        if (t->gemms && t->peak_known && !x[i].gemm_no_peak)
            flags |= TSC_STEP_X_PEAK;
        if (!flags)
            continue;
        out[k++] = (tsc_step_extra){
            .step = s[i].step, .data_stall_ns = x[i].data_stall_ns,
            .gemm_flops = x[i].gemm_flops, .gemm_peak_ns = x[i].gemm_peak_ns,
            .h2d_copies = x[i].h2d_copies,
            .gemm_no_peak = (uint16_t)(x[i].gemm_no_peak > 0xffff ? 0xffff : x[i].gemm_no_peak),
            .flags = flags};
    }
    return k;
}

int bb_steps_bounds(const bb_steps *t, uint64_t step, uint64_t *lo_ns, uint64_t *hi_ns)
{
    if (!t->have_opener || step > t->closed || step < bb_steps_oldest(t))
        return -1;
    const tsc_step_summary *s = &t->ring[step & t->mask];
    *lo_ns = s->start_ns;
    *hi_ns = step == t->closed ? UINT64_MAX : s->end_ns;
    return 0;
}

long long bb_steps_by_seq(const bb_steps *t, uint64_t seq)
{
    for (uint64_t s = bb_steps_oldest(t); t->opener_sequenced && s < t->closed; s++)
        if (t->ring[s & t->mask].opener_seq == seq)
            return (long long)s;
    return -1;
}

long long bb_steps_seq(const bb_steps *t, uint64_t step)
{
    if (!t->have_opener || !t->opener_sequenced || step >= t->closed || step < bb_steps_oldest(t))
        return -1;
    return (long long)t->ring[step & t->mask].opener_seq;
}
