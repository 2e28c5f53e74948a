/* See rec_chunks.h: what the recorder writes of its own besides the
 * threads' records. */
#include "rec_chunks.h"

#include <stdatomic.h>
#include <string.h>

#include "dump_file.h"
#include "fast_clock.h"
#include "parts.h"
#include "rec_counters.h"
#include "rec_meta.h"
#include "rec_slot.h"
#include "rec_state.h"
#include "recorder_internal.h"
#include "self_cost.h"
#include "spin.h"

static char g_meta_buf[TSC_META_PAYLOAD_MAX];

uint64_t tsc_rec_total_dropped(void)
{
    uint64_t d = atomic_load(&tsc_rec_dropped_extra_g);
    uint32_t n = atomic_load_explicit(&tsc_rec_g.nthreads, memory_order_acquire);
    for (uint32_t i = 0; i < n; i++)
        d += atomic_load_explicit(&tsc_rec_g.threads[i]->ring.dropped, memory_order_relaxed);
    return d;
}

/* What the cost figure needs from the recorder (self_cost.h): reads
 * counters the hot path keeps anyway, nothing is added to it. */
void tsc_rec_cost_inputs(tsc_cost_inputs *in)
{
    uint64_t slots = atomic_load(&tsc_rec_g.job_slots_retired);
    uint32_t n = atomic_load_explicit(&tsc_rec_g.nthreads, memory_order_acquire);
    for (uint32_t i = 0; i < n; i++) {
        tsc_thread *t = tsc_rec_g.threads[i];
        uint64_t have = tsc_slot_ring_slots(&t->ring), base = atomic_load(&t->slots_base);
        if (!atomic_load_explicit(&t->own, memory_order_relaxed) && have > base)
            slots += have - base;
    }
    in->job_slots = slots;
    in->bytes_written = tsc_rec_g.dump.bytes_written;
    /* every thread's slot (ring and descriptor table), the drain buffer,
     * black-box mode's store */
    in->memory_bytes = (uint64_t)n * (sizeof(tsc_thread) + tsc_rec_g.ring_bytes) +
                       tsc_rec_g.ring_bytes +
                       (tsc_rec_g.sink ? tsc_rec_g.sink->memory_bytes() : 0);
}

size_t tsc_rec_meta_payload(char *buf, size_t cap, const char *const *keys,
                            const char *const *vals, size_t n, int from_signal)
{
    if (!from_signal)
        tsc_parts_meta();
    char nb[5][24], cost_b[TSC_COST_PAIRS][24];
    const char *dyn_k[6 + TSC_COST_PAIRS + 8] = {TSC_META_ANCHOR_REALTIME, TSC_META_ANCHOR_MONOTONIC,
                                TSC_META_EVENTS, TSC_META_DROPPED, TSC_META_DROPPED_WRITE,
                                TSC_META_HOST_CLOCK};
    const char *dyn_v[6 + TSC_COST_PAIRS + 8] = {tsc_u64_to_str(tsc_clock_now(), nb[0]),
                                tsc_u64_to_str(tsc_mono_ns(), nb[1]),
                                tsc_u64_to_str(tsc_rec_g.events_written, nb[2]),
                                tsc_u64_to_str(tsc_rec_total_dropped(), nb[3]),
                                tsc_u64_to_str(tsc_rec_g.dump.bytes_lost, nb[4]),
                                tsc_clock_describe()};
    size_t nd = 6;
    if (!from_signal) {
        tsc_cost_inputs in;
        tsc_rec_cost_inputs(&in);
        nd += tsc_cost_pairs(&in, dyn_k + nd, dyn_v + nd, cost_b);
    }
    for (size_t i = 0; i < n && nd < sizeof dyn_k / sizeof dyn_k[0]; i++, nd++) {
        dyn_k[nd] = keys[i];
        dyn_v[nd] = vals[i];
    }
    return tsc_meta_encode_all(buf, cap, dyn_k, dyn_v, nd, from_signal);
}

void tsc_rec_write_meta_chunk(int from_signal)
{
    size_t len = tsc_rec_meta_payload(g_meta_buf, sizeof g_meta_buf, NULL, NULL, 0, from_signal);
    if (len)
        tsc_dump_write_chunk(&tsc_rec_g.dump, TSC_CHUNK_META, 0, g_meta_buf, (uint32_t)len);
}

void tsc_rec_write_end_chunk(const char *reason)
{
    char nb[5][24];
    const char *keys[6] = {TSC_META_END_REASON, TSC_META_EVENTS, TSC_META_DROPPED,
                           TSC_META_DROPPED_WRITE, TSC_META_END_REALTIME, TSC_META_EXIT_CODE};
    const char *vals[6] = {reason, tsc_u64_to_str(tsc_rec_g.events_written, nb[0]),
                           tsc_u64_to_str(tsc_rec_total_dropped(), nb[1]),
                           tsc_u64_to_str(tsc_rec_g.dump.bytes_lost, nb[2]),
                           tsc_u64_to_str(tsc_clock_now(), nb[3]), NULL};
    int code = atomic_load(&tsc_rec_g.exit_code);
    size_t nkeys = 5;
    /* Only an exit has a status (0..255 as the parent sees it). */
    if (code >= 0 && !strcmp(reason, "exit"))
        vals[nkeys++] = tsc_u64_to_str((uint64_t)(code & 0xff), nb[4]);
    char buf[320];
    size_t len = tsc_meta_encode(buf, sizeof buf, keys, vals, nkeys);
    if (len)
        tsc_dump_write_chunk(&tsc_rec_g.dump, TSC_CHUNK_END, 0, buf, (uint32_t)len);
}
