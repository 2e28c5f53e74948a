/* See rec_watchdog.h. */
#include "rec_watchdog.h"

#include <stdatomic.h>
#include <stdio.h>

#include "fast_clock.h"
#include "rec_drain.h"
#include "rec_slot.h"
#include "rec_state.h"
#include "recorder_internal.h"

size_t tsc_rec_check_hangs(char *msg, size_t cap)
{
    size_t len = 0;
    uint64_t now = tsc_clock_now(), limit = (uint64_t)tsc_rec_g.cfg.hang_s * 1000000000ull;
    uint32_t n = atomic_load_explicit(&tsc_rec_g.nthreads, memory_order_acquire);
    for (uint32_t i = 0; i < n; i++) {
        tsc_thread *t = tsc_rec_g.threads[i];
        if (atomic_load_explicit(&t->slot, memory_order_acquire) != TSC_SLOT_LIVE)
            continue;
        tsc_inflight f;
        if (!tsc_slot_read_inflight(t, &f) || f.t0 == t->reported_t0 || now < f.t0 ||
            now - f.t0 < limit)
            continue;
        t->reported_t0 = f.t0;
        tsc_rec_write_call_slot(t, &f, TSC_EV_HANG, now, 0);
        if (tsc_rec_sink_on())
            tsc_rec_g.sink->hang(f.comm, f.seq, f.name ? f.name : "nccl call");
        if (len < cap) {
            int w = snprintf(msg + len, cap - len,
                             "tscope: rank %d (pid %u, thread %u): %s on comm %016llx seq "
                             "%llu in flight for %.1f s (TSCOPE_HANG_S=%u); marker written\n",
                             tsc_rec_g.rank_id, (unsigned)tsc_rec_g.pid, t->tid,
                             f.name ? f.name : "nccl call", (unsigned long long)f.comm,
                             (unsigned long long)f.seq, (double)(now - f.t0) / 1e9,
                             tsc_rec_g.cfg.hang_s);
            len = w < 0 ? len : len + (size_t)w >= cap ? cap - 1 : len + (size_t)w;
        }
    }
    return len;
}

void tsc_rec_inflight(uint32_t *calls, uint64_t *oldest_t0)
{
    *calls = 0;
    *oldest_t0 = 0;
    uint32_t n = atomic_load_explicit(&tsc_rec_g.nthreads, memory_order_acquire);
    for (uint32_t i = 0; i < n; i++) {
        tsc_thread *t = tsc_rec_g.threads[i];
        tsc_inflight f;
        if (atomic_load_explicit(&t->slot, memory_order_acquire) != TSC_SLOT_LIVE ||
            !tsc_slot_read_inflight(t, &f) || !f.desc)
            continue;
        (*calls)++;
        if (!*oldest_t0 || f.t0 < *oldest_t0)
            *oldest_t0 = f.t0;
    }
}
