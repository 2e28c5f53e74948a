/* The recorder: per-thread rings, the thread registry, lazy set-up and
 * the background writer that turns rings into chunks.  See recorder.h for
 * the contract; the metadata store is rec_meta.c, warnings warn.c.
 *
 * Locking: the hot path (tsc_rec_event, tsc_rec_intern on a hit) touches
 * only the calling thread's ring and intern table.  Everything else is
 * guarded by spin locks built on atomics (spin.h) rather than pthread
 * mutexes, so the signal-handler flush can try them without deadlocking:
 * the drain lock (one consumer at a time for every ring, and the dump
 * file) and the registry lock (thread set-up). */
#include "config_warn.h"
#include "recorder.h"
#include "tsc_tls.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "comm_registry.h"
#include "dump_file.h"
#include "fast_clock.h"
#include "identity.h"
#include "intern.h"
#include "parts.h"
#include "recorder_internal.h"
#include "rec_counters.h"
#include "rec_meta.h"
#include "rec_thread.h"
#include "ring.h"
#include "self_cost.h"
#include "sink.h"
#include "spin.h"


/* A thread slot's life: claimed by a new thread, live while it records,
 * exited when the thread ends, reusable once the writer has drained it;
 * so threads that come and go do not use up TSCOPE_MAX_THREADS. */
enum { SLOT_CLAIMED = 0, SLOT_LIVE, SLOT_EXITED, SLOT_REUSABLE };


/* ------------------------------------------------------------ globals */

_Atomic int tsc_rec_state_g;
static tsc_config g_cfg;
static _Atomic int g_cfg_loaded;
_Atomic uint32_t tsc_rec_epoch_g = 1;
static _Atomic uint64_t g_job_slots_retired; /* of slots since reused by another thread */
static pid_t g_pid;

static tsc_dump g_dump = {.fd = -1};
/* The sink besides the dump file (sink.h); NULL when none is registered. */
static const tsc_sink *g_sink;

void tsc_sink_register(const tsc_sink *sink) { g_sink = sink; }

/* 1 while that sink takes the records instead of the dump. */
static int sink_on(void) { return g_sink && g_sink->on(); }
static uint64_t g_events_written;
static tsc_event *g_scratch;
static size_t g_scratch_slots;
static size_t g_ring_bytes;

static tsc_thread **g_threads;
static _Atomic uint32_t g_nthreads;
static uint32_t g_max_threads;

static int g_wake_fd = -1;
static pthread_t g_writer;
static int g_writer_started;
static _Atomic int g_writer_stop;
static _Atomic int g_writer_running;

static _Atomic int g_drain_lock, g_reg_lock;
static pthread_key_t g_thread_key;  /* its destructor marks slots exited */
static int g_thread_key_ok;

static char g_meta_buf[TSC_META_PAYLOAD_MAX];
static char g_host[256];
static int g_rank_id = -1;                     /* global rank, for messages */
static _Atomic int g_exit_code = -1;           /* status given to exit/_exit */

TSC_TLS tsc_thread *tsc_rec_tls_thr;
TSC_TLS uint32_t tsc_rec_tls_epoch;
static TSC_TLS uint32_t tls_refused_epoch; /* over TSCOPE_MAX_THREADS in this epoch */
static TSC_TLS int tls_in_setup;

/* -------------------------------------------------------------- clocks */

uint64_t tsc_now_ns(void) { return tsc_clock_now(); }

static uint32_t my_tid(void) { return (uint32_t)syscall(SYS_gettid); }

/* -------------------------------------------------------- configuration */

static const char *real_getenv(const char *name) { return getenv(name); }

void tsc_rec_load_config(void)
{
    int expect = 0;
    /* 2 = loading, 1 = loaded: concurrent first users wait briefly. */
    static _Atomic int loading;
    if (atomic_load(&g_cfg_loaded))
        return;
    if (!atomic_compare_exchange_strong(&loading, &expect, 1)) {
        while (!atomic_load(&g_cfg_loaded))
            sched_yield();
        return;
    }
    tsc_config c;
    /* QUIET decides whether the other variables' warnings are printed. */
    tsc_config_load(&c, real_getenv, NULL);
    tsc_warn_set_quiet(c.quiet);
    /* held until this process records, then printed once per job */
    tsc_config_load(&c, real_getenv, tsc_config_warn_defer);
    g_cfg = c;
    atomic_store(&g_cfg_loaded, 1);
    if (g_cfg.disabled)
        atomic_store(&tsc_rec_state_g, TSC_REC_OFF);
}

const tsc_config *tsc_rec_config(void)
{
    tsc_rec_load_config();
    return &g_cfg;
}

/* ------------------------------------------------------------- chunks */

static uint64_t total_dropped(void)
{
    uint64_t d = atomic_load(&tsc_rec_dropped_extra_g);
    uint32_t n = atomic_load_explicit(&g_nthreads, memory_order_acquire);
    for (uint32_t i = 0; i < n; i++)
        d += atomic_load_explicit(&g_threads[i]->ring.dropped, memory_order_relaxed);
    return d;
}

/* A ring's slots ever filled or refused: the job's cost counter. */
static uint64_t ring_slots(tsc_ring *r)
{
    return atomic_load_explicit(&r->head, memory_order_relaxed) +
           atomic_load_explicit(&r->dropped, memory_order_relaxed);
}

/* What the cost figure needs from the recorder (self_cost.h): reads
 * counters the hot path keeps anyway, nothing is added to it. */
void tsc_rec_cost_inputs(tsc_cost_inputs *in)
{
    uint64_t slots = atomic_load(&g_job_slots_retired);
    uint32_t n = atomic_load_explicit(&g_nthreads, memory_order_acquire);
    for (uint32_t i = 0; i < n; i++) {
        tsc_thread *t = g_threads[i];
        uint64_t have = ring_slots(&t->ring), base = atomic_load(&t->slots_base);
        if (!atomic_load_explicit(&t->own, memory_order_relaxed) && have > base)
            slots += have - base;
    }
    in->job_slots = slots;
    in->bytes_written = g_dump.bytes_written;
    /* every thread's slot (ring and descriptor table), the drain buffer,
     * black-box mode's store */
    in->memory_bytes = (uint64_t)n * (sizeof(tsc_thread) + g_ring_bytes) + g_ring_bytes +
                       (g_sink ? g_sink->memory_bytes() : 0);
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
    const char *dyn_v[6 + TSC_COST_PAIRS + 8] = {tsc_u64_to_str(tsc_now_ns(), nb[0]),
                                tsc_u64_to_str(tsc_mono_ns(), nb[1]),
                                tsc_u64_to_str(g_events_written, nb[2]),
                                tsc_u64_to_str(total_dropped(), nb[3]),
                                tsc_u64_to_str(g_dump.bytes_lost, nb[4]), tsc_clock_describe()};
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

/* Under the drain lock.  from_signal: no dlsym, bounded meta lock. */
static void write_meta_chunk(int from_signal)
{
    size_t len = tsc_rec_meta_payload(g_meta_buf, sizeof g_meta_buf, NULL, NULL, 0, from_signal);
    if (len)
        tsc_dump_write_chunk(&g_dump, TSC_CHUNK_META, 0, g_meta_buf, (uint32_t)len);
}

static void write_end_chunk(const char *reason)
{
    char nb[5][24];
    const char *keys[6] = {TSC_META_END_REASON, TSC_META_EVENTS, TSC_META_DROPPED,
                           TSC_META_DROPPED_WRITE, TSC_META_END_REALTIME, TSC_META_EXIT_CODE};
    const char *vals[6] = {reason, tsc_u64_to_str(g_events_written, nb[0]),
                           tsc_u64_to_str(total_dropped(), nb[1]),
                           tsc_u64_to_str(g_dump.bytes_lost, nb[2]),
                           tsc_u64_to_str(tsc_now_ns(), nb[3]), NULL};
    int code = atomic_load(&g_exit_code);
    size_t nkeys = 5;
    /* Only an exit has a status (0..255 as the parent sees it). */
    if (code >= 0 && !strcmp(reason, "exit"))
        vals[nkeys++] = tsc_u64_to_str((uint64_t)(code & 0xff), nb[4]);
    char buf[320];
    size_t len = tsc_meta_encode(buf, sizeof buf, keys, vals, nkeys);
    if (len)
        tsc_dump_write_chunk(&g_dump, TSC_CHUNK_END, 0, buf, (uint32_t)len);
}

/* ------------------------------------------------------------- draining */

static void note_write_failure(int from_signal, uint64_t lost_before)
{
    if (g_dump.bytes_lost == lost_before)
        return;
    /* The lost chunk may have defined descriptors: make every thread
     * define its descriptors again. */
    atomic_fetch_add(&tsc_rec_intern_gen_g, 1);
    if (!from_signal)
        tsc_warn_once("write", "cannot write %s: %s; the job goes on, lost bytes are counted "
                      "in the dump", g_dump.path, strerror(g_dump.last_errno));
}

static uint64_t count_events(const tsc_event *s, size_t n)
{
    uint64_t ev = 0;
    for (size_t i = 0; i < n;) {
        if (s[i].kind == TSC_EV_DESC) {
            const tsc_desc_head *h = (const tsc_desc_head *)&s[i];
            i += tsc_desc_slots(h->payload_len);
        } else {
            ev++;
            i++;
        }
    }
    return ev;
}

/* Where drained slots go: the dump, or the other sink (black-box mode's
 * memory). */
static int put_slots(uint32_t tid, const void *slots, size_t n)
{
    if (sink_on()) {
        g_sink->take(tid, slots, n);
        return 0;
    }
    return tsc_dump_write_chunk(&g_dump, TSC_CHUNK_EVENTS, tid, slots,
                                (uint32_t)(n * TSC_SLOT_SIZE));
}

static void emit_thread_desc_chunk(tsc_thread *t, const char *name)
{
    unsigned char payload[8 + 16];
    tsc_desc_thread d = {.tid = t->tid, .name_len = (uint32_t)strlen(name)};
    memcpy(payload, &d, 8);
    memcpy(payload + 8, name, d.name_len);
    tsc_event slots[2];
    size_t n = tsc_encode_desc(slots, 2, TSC_DESC_THREAD, atomic_fetch_add(&tsc_rec_next_desc_g, 1),
                               payload, (uint16_t)(8 + d.name_len));
    if (n)
        put_slots(t->tid, slots, n);
}

/* PyTorch names its backward threads after they start; a thread first
 * seen under its creator's name gets a second THREAD descriptor. */
static void check_thread_rename(tsc_thread *t)
{
    char path[64], name[17];
    snprintf(path, sizeof path, "/proc/self/task/%u/comm", t->tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = read(fd, name, 16);
    close(fd);
    if (n <= 0)
        return;
    if (name[n - 1] == '\n')
        n--;
    name[n] = '\0';
    if (strcmp(name, t->name) == 0)
        return;
    memcpy(t->name, name, (size_t)n + 1);
    emit_thread_desc_chunk(t, name);
}

/* A consistent copy of a thread's in-flight record (the thread may be
 * leaving the call or entering the next one meanwhile): 1 when it is
 * inside a call. */
typedef struct inflight {
    uint64_t t0, seq, comm;
    uint32_t desc, bits;
    const char *name;
} inflight;

static int read_inflight(tsc_thread *t, inflight *f)
{
    f->t0 = atomic_load_explicit(&t->inflight_t0, memory_order_acquire);
    if (!f->t0)
        return 0;
    f->seq = atomic_load_explicit(&t->inflight_seq, memory_order_relaxed);
    f->comm = atomic_load_explicit(&t->inflight_comm, memory_order_relaxed);
    f->desc = atomic_load_explicit(&t->inflight_desc, memory_order_relaxed);
    f->bits = atomic_load_explicit(&t->inflight_bits, memory_order_relaxed);
    f->name = atomic_load_explicit(&t->inflight_name, memory_order_relaxed);
    atomic_thread_fence(memory_order_acquire);
    return atomic_load_explicit(&t->inflight_t0, memory_order_relaxed) == f->t0;
}

/* One slot for thread t (ENTER or HANG of its call in flight) as a chunk
 * of its stream, after its ring was drained (so the call's descriptor is
 * already in the file). */
static void write_call_slot(tsc_thread *t, const inflight *f, uint8_t kind, uint64_t end_ns,
                            int from_signal)
{
    tsc_event e = {.kind = kind, .flags = (uint8_t)f->bits, .aux = (uint16_t)(f->bits >> 16),
                   .desc = f->desc, .start_ns = f->t0, .end_ns = end_ns, .val = f->seq};
    uint64_t lost = g_dump.bytes_lost;
    if (put_slots(t->tid, &e, 1) == 0)
        g_events_written++;
    else
        note_write_failure(from_signal, lost);
}

/* The ENTER marker of a call in flight, once per call: every call leaves
 * its in-flight record before the real call (tsc_rec_thread_enter); only one
 * still open when the dump is written needs to be on disk, since a call
 * that returned is proven entered by its own record.  Written at every
 * drain (periodic, signal, exit), so a stuck call reaches the file within
 * one flush period. */
static void persist_inflight(tsc_thread *t, const inflight *f, int from_signal)
{
    if (f->t0 == t->persisted_t0 || !f->desc)
        return;
    t->persisted_t0 = f->t0;
    write_call_slot(t, f, TSC_EV_NCCL_ENTER, 0, from_signal);
}

/* What the parts record from their own state (the NCCL profiler plugin's
 * proxy ops that stopped moving: a hung collective's never stop, and an
 * op's records are written at its stop), after the threads' own records. */
static void persist_parts_records(int from_signal)
{
    tsc_event e[32];
    uint32_t tids[32];
    size_t n = tsc_parts_own_records(tsc_now_ns(), e, tids, 32);
    for (size_t i = 0; i < n; i++) {
        uint64_t lost = g_dump.bytes_lost;
        if (put_slots(tids[i], &e[i], 1) == 0)
            g_events_written++;
        else
            note_write_failure(from_signal, lost);
    }
}

/* check_names: re-read thread names (periodic drains only). */
static void drain_all(int from_signal, int check_names)
{
    /* Black-box memory allocates: never from a handler (what a signal
     * would have flushed stays in RAM, or is lost with the process). */
    if (from_signal && sink_on())
        return;
    /* Translating CUPTI buffers takes locks and time: never in a handler. */
    if (!from_signal)
        tsc_parts_drain();
    uint32_t n = atomic_load_explicit(&g_nthreads, memory_order_acquire);
    for (uint32_t i = 0; i < n; i++) {
        tsc_thread *t = g_threads[i];
        int slot = atomic_load_explicit(&t->slot, memory_order_acquire);
        if (slot != SLOT_LIVE && slot != SLOT_EXITED)
            continue; /* being set up for a new thread, or empty */
        /* The call in flight is read before the ring is: its descriptor
         * was pushed before the call was marked, so the drain below writes
         * the definition before the ENTER slot that refers to it (read the
         * other way round, a call entered between the two would refer to a
         * descriptor the file defines only in the next drain).  It is
         * written only if still in flight after the drain: a call that
         * ended meanwhile may have its exit record in this drain already,
         * and an ENTER after it would read as a call never left. */
        inflight f;
        int in_call = slot == SLOT_LIVE && read_inflight(t, &f);
        /* Written straight from the ring (the producer does not touch
         * published slots until they are consumed), copied out only when
         * they wrap around its end. */
        const tsc_event *src;
        size_t k = tsc_ring_peek_span(&t->ring, &src);
        if (!k) {
            k = tsc_ring_peek(&t->ring, g_scratch, g_scratch_slots);
            src = g_scratch;
        }
        if (k) {
            uint64_t lost = g_dump.bytes_lost;
            if (put_slots(t->tid, src, k) == 0)
                g_events_written += count_events(src, k);
            else
                note_write_failure(from_signal, lost);
            tsc_ring_consume(&t->ring, k);
        }
        atomic_store_explicit(&t->wake_pending, 0, memory_order_relaxed);
        if (in_call &&
            atomic_load_explicit(&t->inflight_t0, memory_order_acquire) == f.t0)
            persist_inflight(t, &f, from_signal);
        /* After the ring, so a new name follows the first one in the
         * thread's stream. */
        if (check_names && !from_signal && slot == SLOT_LIVE)
            check_thread_rename(t);
        /* An exited thread's producer side is gone: once its last events
         * are out, the slot can serve a new thread. */
        if (slot == SLOT_EXITED && tsc_ring_is_empty(&t->ring))
            atomic_store_explicit(&t->slot, SLOT_REUSABLE, memory_order_release);
    }
    persist_parts_records(from_signal);
}

int tsc_rec_write_slots_locked(uint32_t tid, const tsc_event *slots, size_t n, uint64_t events)
{
    if (n == 0)
        return 0;
    uint64_t lost = g_dump.bytes_lost;
    if (put_slots(tid, slots, n) == 0) {
        g_events_written += events;
        return 0;
    }
    note_write_failure(0, lost);
    return -1;
}

void tsc_rec_wake_writer(void)
{
    if (g_wake_fd < 0)
        return;
    int saved = errno;
    uint64_t one = 1;
    ssize_t w = write(g_wake_fd, &one, sizeof one); /* non-blocking eventfd */
    (void)w;
    errno = saved;
}

void tsc_rec_help_drain(void)
{
    int saved = errno;
    if (atomic_load(&tsc_rec_state_g) == TSC_REC_ACTIVE && tsc_rec_owned_here() && tsc_parts_have_drain() &&
        tsc_spin_trylock(&g_drain_lock)) {
        tsc_parts_drain();
        tsc_spin_unlock(&g_drain_lock);
    }
    errno = saved;
}

void tsc_rec_flush(void)
{
    int saved = errno;
    if (atomic_load(&tsc_rec_state_g) == TSC_REC_ACTIVE && tsc_rec_owned_here() &&
        tsc_spin_lock_bounded(&g_drain_lock, 200)) {
        drain_all(1, 0);
        write_meta_chunk(1);
        tsc_spin_unlock(&g_drain_lock);
    }
    errno = saved;
}

void tsc_rec_finish(const char *reason, int from_signal)
{
    int saved = errno;
    if (atomic_load(&tsc_rec_state_g) != TSC_REC_ACTIVE || !tsc_rec_owned_here())
        goto out;
    if (!tsc_spin_lock_bounded(&g_drain_lock, from_signal ? 300 : 3000)) {
        /* The writer (or a drain on CUPTI's thread) kept the dump: exit
         * goes on rather than wait, and the user hears that the dump ends
         * early (the report reads it as cut). */
        tsc_warn_fixed_once("finish", "the dump could not be finished at exit (the writer held "
                            "it too long): it ends without its last records, metadata and end "
                            "marker");
        goto out;
    }
    drain_all(from_signal, !from_signal);
    if (!from_signal && sink_on())
        g_sink->exit(&g_dump);
    write_meta_chunk(from_signal);
    write_end_chunk(reason);
    tsc_spin_unlock(&g_drain_lock);
out:
    errno = saved;
}

/* ------------------------------------------------------- hang watchdog */

/* Under the drain lock, after drain_all (so each call's descriptor and
 * ENTER are in the file before its HANG slot).  Every thread inside an NCCL
 * call for at least TSCOPE_HANG_S gets one HANG slot in its own stream and
 * one line in msg; returns the length of msg.  Only reads the threads'
 * in-flight fields: the job's threads are never stopped or waited for. */
static size_t check_hangs(char *msg, size_t cap)
{
    size_t len = 0;
    uint64_t now = tsc_now_ns(), limit = (uint64_t)g_cfg.hang_s * 1000000000ull;
    uint32_t n = atomic_load_explicit(&g_nthreads, memory_order_acquire);
    for (uint32_t i = 0; i < n; i++) {
        tsc_thread *t = g_threads[i];
        if (atomic_load_explicit(&t->slot, memory_order_acquire) != SLOT_LIVE)
            continue;
        inflight f;
        if (!read_inflight(t, &f) || f.t0 == t->reported_t0 || now < f.t0 ||
            now - f.t0 < limit)
            continue;
        t->reported_t0 = f.t0;
        write_call_slot(t, &f, TSC_EV_HANG, now, 0);
        if (sink_on())
            g_sink->hang(f.comm, f.seq, f.name ? f.name : "nccl call");
        if (len < cap) {
            int w = snprintf(msg + len, cap - len,
                             "tscope: rank %d (pid %u, thread %u): %s on comm %016llx seq "
                             "%llu in flight for %.1f s (TSCOPE_HANG_S=%u); marker written\n",
                             g_rank_id, (unsigned)g_pid, t->tid, f.name ? f.name : "nccl call",
                             (unsigned long long)f.comm, (unsigned long long)f.seq,
                             (double)(now - f.t0) / 1e9, g_cfg.hang_s);
            len = w < 0 ? len : len + (size_t)w >= cap ? cap - 1 : len + (size_t)w;
        }
    }
    return len;
}

void tsc_rec_inflight(uint32_t *calls, uint64_t *oldest_t0)
{
    *calls = 0;
    *oldest_t0 = 0;
    uint32_t n = atomic_load_explicit(&g_nthreads, memory_order_acquire);
    for (uint32_t i = 0; i < n; i++) {
        tsc_thread *t = g_threads[i];
        inflight f;
        if (atomic_load_explicit(&t->slot, memory_order_acquire) != SLOT_LIVE ||
            !read_inflight(t, &f) || !f.desc)
            continue;
        (*calls)++;
        if (!*oldest_t0 || f.t0 < *oldest_t0)
            *oldest_t0 = f.t0;
    }
}

int tsc_rec_writer_alive(void)
{
    return g_writer_started && atomic_load(&g_writer_running) && !atomic_load(&g_writer_stop);
}

/* ---------------------------------------------------------- the writer */

static void *writer_main(void *arg)
{
    (void)arg;
    prctl(PR_SET_NAME, "tscope-writer", 0, 0, 0);
    tsc_cost_thread_begin(TSC_COST_WRITER);
    atomic_store(&g_writer_running, 1);
    tsc_cost_calibrate(); /* here, not on the job's thread at set-up */
    uint64_t period = (uint64_t)g_cfg.flush_ms * 1000000ull;
    uint64_t next_flush = tsc_mono_ns() + period;
    uint64_t next_clock = tsc_mono_ns() + tsc_clock_tick_period_ns();
    uint64_t meta_periods = 0;
    for (;;) {
        uint64_t now = tsc_mono_ns();
        if (tsc_clock_tick_period_ns() && now >= next_clock) {
            tsc_clock_tick();
            next_clock = now + tsc_clock_tick_period_ns();
        }
        uint64_t wake = next_flush;
        if (tsc_clock_tick_period_ns() && next_clock < wake)
            wake = next_clock;
        int wait_ms = now >= wake ? 0 : (int)((wake - now + 999999) / 1000000);
        struct pollfd p[2] = {{.fd = g_wake_fd, .events = POLLIN},
                              {.fd = g_sink ? g_sink->poll_fd() : -1, .events = POLLIN}};
        int r = poll(p, p[1].fd >= 0 ? 2 : 1, wait_ms);
        if (r > 0 && (p[0].revents & POLLIN)) {
            uint64_t v;
            ssize_t n = read(g_wake_fd, &v, sizeof v);
            (void)n;
        }
        if (r > 0 && p[1].fd >= 0 && (p[1].revents & POLLIN))
            g_sink->serve(); /* a scrape of black-box mode's /metrics */
        if (atomic_load(&g_writer_stop))
            break;
        /* A half-full ring only needs draining; the CUPTI hand-over and the
         * metadata rewrite happen once per period, which keeps the file
         * near 32 bytes per event however busy the rings are. */
        int periodic = tsc_mono_ns() >= next_flush ||
                       (g_sink && (g_sink->signal_pending() || g_sink->term_pending()));
        if (periodic) {
            next_flush = tsc_mono_ns() + period;
            tsc_cost_inputs in;
            tsc_rec_cost_inputs(&in);
            tsc_cost_govern(&in);
            /* Outside the drain lock: CUPTI may call back into tscope
             * (buffer hand-over) on this thread. */
            tsc_parts_flush(0);
        }
        char hang_msg[1024];
        size_t hang_len = 0;
        tsc_spin_lock(&g_drain_lock);
        drain_all(0, periodic);
        if (periodic && g_cfg.hang_s)
            hang_len = check_hangs(hang_msg, sizeof hang_msg);
        if (g_sink && g_sink->term_pending()) {
            g_sink->term(&g_dump, total_dropped()); /* a SIGTERM handler waits for it */
        } else if (periodic && sink_on()) {
            g_sink->period(&g_dump, total_dropped());
            /* The summaries' metadata changes little: once a minute keeps
             * the file small between steps. */
            if (++meta_periods * g_cfg.flush_ms >= 60000) {
                meta_periods = 0;
                write_meta_chunk(0);
            }
        } else if (periodic) {
            write_meta_chunk(0);
        }
        tsc_spin_unlock(&g_drain_lock);
        /* Outside the lock: a slow stderr must not hold up a flush. */
        if (hang_len) {
            ssize_t w = write(STDERR_FILENO, hang_msg, hang_len);
            (void)w;
        }
    }
    tsc_cost_thread_end(TSC_COST_WRITER);
    return NULL;
}

static void start_writer(void)
{
    g_wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    sigset_t all, old;
    sigfillset(&all);
    /* The writer never runs signal handlers: a handler's flush could
     * otherwise interrupt the writer while it holds the drain lock. */
    pthread_sigmask(SIG_BLOCK, &all, &old);
    atomic_store(&g_writer_stop, 0);
    atomic_store(&g_writer_running, 0);
    int rc = pthread_create(&g_writer, NULL, writer_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc == 0) {
        g_writer_started = 1;
        /* Let the thread finish starting before the application goes on:
         * an application that forks right away must not fork while the
         * new thread is inside its start-up allocations (glibc copes, but
         * sanitizer allocators of gcc 12 deadlock in the child). */
        uint64_t deadline = tsc_mono_ns() + 1000000000ull;
        while (!atomic_load(&g_writer_running) && tsc_mono_ns() < deadline)
            sched_yield();
    } else
        tsc_warn_once("writer", "cannot start the writer thread (%s); events are written "
                      "only at exit", strerror(rc));
}

static void stop_writer(void)
{
    if (!g_writer_started)
        return;
    atomic_store(&g_writer_stop, 1);
    if (g_wake_fd >= 0) {
        uint64_t one = 1;
        ssize_t w = write(g_wake_fd, &one, sizeof one);
        (void)w;
    }
    /* Bounded: a writer stuck in write(2) on a hung file system must not
     * keep the process from exiting. */
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 3;
    if (pthread_timedjoin_np(g_writer, NULL, &deadline) == 0)
        g_writer_started = 0;
}

void tsc_rec_wake_for(tsc_thread *t, uint64_t used)
{
    if (__builtin_expect(used * 2 < tsc_ring_capacity(&t->ring), 1) || g_wake_fd < 0 ||
        atomic_load_explicit(&t->wake_pending, memory_order_relaxed))
        return;
    /* `used` is measured against the producer's cached tail, which lags
     * behind the writer's drains: look at the real tail before waking the
     * writer, or every call after the first drain would wake it again. */
    tsc_ring *r = &t->ring;
    r->tail_cache = atomic_load_explicit(&r->tail, memory_order_acquire);
    if ((atomic_load_explicit(&r->head, memory_order_relaxed) - r->tail_cache) * 2 <
        tsc_ring_capacity(r))
        return;
    atomic_store_explicit(&t->wake_pending, 1, memory_order_relaxed);
    int saved = errno;
    uint64_t one = 1;
    ssize_t w = write(g_wake_fd, &one, sizeof one); /* non-blocking eventfd */
    (void)w;
    errno = saved;
}

/* ------------------------------------------------------------ lifecycle */

static void at_fork_child(void)
{
    /* Threads do not survive fork: the parent's rings, writer and file are
     * not ours.  Forget them (their memory stays shared copy-on-write and
     * untouched) and start afresh if this child records. */
    int s = atomic_load(&tsc_rec_state_g);
    if (s == TSC_REC_ACTIVE || s == TSC_REC_INITIALIZING || s == TSC_REC_CLOSED)
        atomic_store(&tsc_rec_state_g, TSC_REC_UNINIT);
    atomic_fetch_add(&tsc_rec_epoch_g, 1);
    if (g_dump.fd >= 0)
        close(g_dump.fd);
    g_dump.fd = -1;
    if (g_wake_fd >= 0)
        close(g_wake_fd);
    g_wake_fd = -1;
    g_threads = NULL;
    atomic_store(&g_nthreads, 0);
    g_writer_started = 0;
    g_events_written = 0;
    atomic_store(&tsc_rec_dropped_extra_g, 0);
    atomic_store(&g_job_slots_retired, 0);
    tsc_cost_after_fork();
    atomic_store(&g_drain_lock, 0);
    atomic_store(&g_reg_lock, 0);
    tsc_meta_after_fork();
    tsc_clock_after_fork();
    tsc_rec_tls_thr = NULL;
    tsc_parts_fork_child();
}

/* A process whose only GPU activity was CUDA's initialisation (no kernel,
 * copy or NCCL communicator: a launcher that queries the device, an
 * Inductor compile worker) is not one of the job's ranks, and its dump
 * would be read as one.  It goes, when CUPTI watched the whole process;
 * otherwise tscope cannot tell, and keeps it.  A single-GPU job without
 * NCCL ran kernels: its dump stays. */
static void discard_if_helper(void)
{
    if (g_cfg.blackbox || !tsc_parts_saw_no_device_work() || tsc_comm_count_ever() > 0)
        return;
    unlink(g_dump.path);
}

void tsc_rec_exit(void)
{
    int saved = errno;
    if (atomic_load(&tsc_rec_state_g) != TSC_REC_ACTIVE || !tsc_rec_owned_here())
        goto out;
    tsc_parts_exit(); /* the sampler's last sample goes into the final flush */
    stop_writer();
    tsc_rec_finish("exit", 0);
    discard_if_helper();
    atomic_store(&tsc_rec_state_g, TSC_REC_CLOSED);
out:
    errno = saved;
}

/* on_exit rather than atexit: it is told the exit status (also of a
 * return from main), which the END chunk records. */
static void on_exit_handler(int status, void *arg)
{
    (void)arg;
    atomic_store(&g_exit_code, status & 0xff);
    tsc_rec_exit();
}

int tsc_rec_owned_here(void) { return getpid() == g_pid; }

const char *tsc_rec_host(void) { return g_host; }

static void on_thread_exit(void *p)
{
    tsc_thread *t = p;
    /* Anything this dying thread records after this point (other
     * libraries' destructors) is dropped, not written into a slot that may
     * already belong to another thread. */
    uint32_t epoch = atomic_load(&tsc_rec_epoch_g);
    tsc_rec_tls_thr = NULL;
    tls_refused_epoch = epoch;
    if (t && t->epoch == epoch)
        atomic_store_explicit(&t->slot, SLOT_EXITED, memory_order_release);
}

static int setup(void)
{
    tsc_rec_load_config();
    if (g_cfg.disabled) {
        atomic_store(&tsc_rec_state_g, TSC_REC_OFF);
        return 0;
    }
    g_pid = getpid();
    tsc_clock_setup(g_cfg.os_clock);
    if (gethostname(g_host, sizeof g_host - 1) < 0)
        snprintf(g_host, sizeof g_host, "unknown");
    tsc_identity id;
    tsc_identity_from_env(&id, real_getenv);
    uint64_t rt = tsc_now_ns(), mono = tsc_mono_ns();

    g_ring_bytes = (size_t)g_cfg.buffer_kb * 1024;
    g_max_threads = g_cfg.max_threads;
    g_threads = calloc(g_max_threads, sizeof *g_threads);
    tsc_ring probe;
    if (!g_threads || tsc_ring_init(&probe, g_ring_bytes) < 0) {
        tsc_warn_once("nomem", "out of memory at set-up; tracing is off");
        free(g_threads);
        g_threads = NULL;
        return -1;
    }
    g_scratch_slots = tsc_ring_capacity(&probe);
    g_scratch = probe.slots; /* reuse the allocation as the drain buffer */

    int rc = tsc_dump_open(&g_dump, g_cfg.out_dir, id.rank, g_host, (uint32_t)g_pid, rt);
    tsc_config_warn_flush(rc < 0 ? NULL : g_cfg.out_dir, id.run_id);
    if (rc < 0) {
        tsc_warn_once("open", "cannot create a dump in '%s': %s; tracing is off for this "
                      "process", g_cfg.out_dir, strerror(-rc));
        return -1;
    }
    tsc_meta_gather(g_host, &id, rt, mono);
    g_rank_id = id.rank;
    g_events_written = 0;
    if (g_cfg.blackbox && g_sink && g_sink->setup(&g_cfg, &id, g_host, (uint32_t)g_pid) == 0)
        tsc_rec_meta(TSC_META_MODE, "blackbox");
    tsc_cost_start(mono);
    tsc_cost_set_budget(g_cfg.budget_cpct, g_cfg.flush_ms, g_cfg.nvml_ms != 0);
    write_meta_chunk(0);

    static int registered; /* survives fork: handlers are inherited */
    if (!registered) {
        registered = 1;
        pthread_atfork(NULL, NULL, at_fork_child);
        on_exit(on_exit_handler, NULL);
        g_thread_key_ok = pthread_key_create(&g_thread_key, on_thread_exit) == 0;
    }
    tsc_parts_setup();
    start_writer();
    return 0;
}

int tsc_rec_active(void)
{
    int s = atomic_load_explicit(&tsc_rec_state_g, memory_order_acquire);
    if (__builtin_expect(s == TSC_REC_ACTIVE, 1))
        return 1;
    if (s != TSC_REC_UNINIT && s != TSC_REC_INITIALIZING)
        return 0;
    if (tls_in_setup)
        return 0;
    int saved = errno;
    int expect = TSC_REC_UNINIT;
    if (atomic_compare_exchange_strong(&tsc_rec_state_g, &expect, TSC_REC_INITIALIZING)) {
        tls_in_setup = 1;
        int rc = setup();
        tls_in_setup = 0;
        if (atomic_load(&tsc_rec_state_g) == TSC_REC_INITIALIZING) {
            atomic_store_explicit(&tsc_rec_state_g, rc == 0 ? TSC_REC_ACTIVE : TSC_REC_OFF,
                                  memory_order_release);
            /* Only now: events before ACTIVE are ignored, and the sampler
             * writes most figures only when they change, so a first sample
             * taken during setup lost a constant figure (a GPU's clocks)
             * for the whole run. */
            if (rc == 0)
                tsc_parts_start();
        }
    } else {
        /* Another thread is setting up (a millisecond or so): wait, but
         * never for long. */
        uint64_t deadline = tsc_mono_ns() + 2000000000ull;
        while (atomic_load(&tsc_rec_state_g) == TSC_REC_INITIALIZING && tsc_mono_ns() < deadline)
            sched_yield();
    }
    errno = saved;
    return atomic_load_explicit(&tsc_rec_state_g, memory_order_acquire) == TSC_REC_ACTIVE;
}

/* ------------------------------------------------------------- threads */

/* A drained slot of a thread that ended, or NULL. */
static tsc_thread *claim_reusable_slot(void)
{
    uint32_t n = atomic_load_explicit(&g_nthreads, memory_order_acquire);
    for (uint32_t i = 0; i < n; i++) {
        int expect = SLOT_REUSABLE;
        if (atomic_compare_exchange_strong(&g_threads[i]->slot, &expect, SLOT_CLAIMED))
            return g_threads[i];
    }
    return NULL;
}

/* A fresh slot (published as CLAIMED, which the writer skips), or NULL
 * when TSCOPE_MAX_THREADS slots exist or memory is short. */
static tsc_thread *new_slot(void)
{
    if (!g_threads || atomic_load(&g_nthreads) >= g_max_threads)
        return NULL;
    tsc_thread *t = calloc(1, sizeof *t);
    if (!t || tsc_ring_init(&t->ring, g_ring_bytes) < 0) {
        free(t);
        return NULL;
    }
    atomic_store(&t->slot, SLOT_CLAIMED);
    tsc_spin_lock(&g_reg_lock);
    uint32_t n = atomic_load(&g_nthreads);
    int ok = n < g_max_threads;
    if (ok) {
        g_threads[n] = t;
        atomic_store_explicit(&g_nthreads, n + 1, memory_order_release);
    }
    tsc_spin_unlock(&g_reg_lock);
    if (!ok) {
        tsc_ring_free(&t->ring);
        free(t);
        return NULL;
    }
    return t;
}

static tsc_thread *register_thread(void)
{
    uint32_t epoch = atomic_load_explicit(&tsc_rec_epoch_g, memory_order_relaxed);
    if (tls_refused_epoch == epoch)
        return NULL;
    int saved = errno;
    tsc_thread *t = claim_reusable_slot();
    if (!t)
        t = new_slot();
    if (!t) {
        tls_refused_epoch = epoch;
        tsc_warn_once("threads", "more than TSCOPE_MAX_THREADS=%u threads record; events of "
                      "the others are dropped and counted", g_max_threads);
        errno = saved;
        return NULL;
    }
    /* The ring is empty (new, or drained after its thread ended) and only
     * this thread will produce into it from now on. */
    t->epoch = epoch;
    t->tid = my_tid();
    t->intern_gen = atomic_load(&tsc_rec_intern_gen_g);
    tsc_intern_reset(&t->intern);
    memset(t->name, 0, sizeof t->name);
    prctl(PR_GET_NAME, t->name, 0, 0, 0);
    atomic_store(&t->wake_pending, 0);
    atomic_store(&t->inflight_t0, 0); /* a reused slot's last thread may have died in a call */
    t->reported_t0 = t->persisted_t0 = 0;
    /* The slot's previous thread's count moves to the retired total (base
     * first: a reader in between undercounts, never counts twice). */
    uint64_t old_base = atomic_load(&t->slots_base), have = ring_slots(&t->ring);
    int was_own = atomic_load(&t->own);
    atomic_store(&t->slots_base, have);
    if (!was_own && have > old_base)
        atomic_fetch_add(&g_job_slots_retired, have - old_base);
    atomic_store(&t->own, tsc_cost_own_thread());
    atomic_store_explicit(&t->slot, SLOT_LIVE, memory_order_release);
    if (g_thread_key_ok)
        pthread_setspecific(g_thread_key, t);

    /* The thread's name, before any of its events. */
    unsigned char payload[8 + 16];
    tsc_desc_thread d = {.tid = t->tid, .name_len = (uint32_t)strlen(t->name)};
    memcpy(payload, &d, 8);
    memcpy(payload + 8, t->name, d.name_len);
    tsc_event slots[2];
    size_t k = tsc_encode_desc(slots, 2, TSC_DESC_THREAD, atomic_fetch_add(&tsc_rec_next_desc_g, 1),
                               payload, (uint16_t)(8 + d.name_len));
    tsc_ring_push(&t->ring, slots, k);
    tsc_rec_tls_thr = t;
    tsc_rec_tls_epoch = epoch;
    errno = saved;
    return t;
}

static inline tsc_thread *get_thread(void)
{
    tsc_thread *t = tsc_rec_thread_mine();
    return __builtin_expect(t != NULL, 1) ? t : register_thread();
}

tsc_thread *tsc_rec_thread_slow(void)
{
    if (!tsc_rec_active())
        return NULL;
    tsc_thread *t = get_thread();
    if (!t) /* over TSCOPE_MAX_THREADS: the caller's record is lost */
        atomic_fetch_add_explicit(&tsc_rec_dropped_extra_g, 1, memory_order_relaxed);
    return t;
}

/* A descriptor this thread has not defined (yet, or since a wipe): define
 * it in the stream and remember it.  Out of line: its encoding buffer is
 * 4 KiB of stack the common path does not need. */
static uint32_t __attribute__((noinline)) intern_define(tsc_thread *t, uint8_t desc_type,
                                                        const void *payload, uint16_t len,
                                                        uint64_t h)
{
    uint32_t id = atomic_fetch_add_explicit(&tsc_rec_next_desc_g, 1, memory_order_relaxed);
    tsc_event slots[1 + (TSC_DESC_MAX_PAYLOAD + TSC_SLOT_SIZE - 1) / TSC_SLOT_SIZE];
    size_t n = tsc_encode_desc(slots, sizeof slots / sizeof slots[0], desc_type, id, payload, len);
    if (!n)
        return 0;
    uint64_t used = tsc_ring_push(&t->ring, slots, n);
    if (!used)
        return 0; /* not defined in the stream: do not remember it */
    tsc_rec_wake_for(t, used);
    tsc_intern_insert(&t->intern, desc_type, payload, len, h, id);
    return id;
}

uint32_t tsc_rec_intern(uint8_t desc_type, const void *payload, uint16_t len)
{
    if (atomic_load_explicit(&tsc_rec_state_g, memory_order_acquire) != TSC_REC_ACTIVE)
        return 0;
    if (len > TSC_DESC_MAX_PAYLOAD || (len && !payload))
        return 0;
    tsc_thread *t = get_thread();
    if (!t)
        return 0;
    uint64_t gen = atomic_load_explicit(&tsc_rec_intern_gen_g, memory_order_relaxed);
    if (__builtin_expect(t->intern_gen != gen, 0)) {
        tsc_intern_reset(&t->intern);
        t->intern_gen = gen;
    }
    uint64_t h = 0;
    uint32_t id = tsc_intern_lookup(&t->intern, desc_type, payload, len, &h);
    if (__builtin_expect(id != 0, 1))
        return id;
    return intern_define(t, desc_type, payload, len, h);
}

uint32_t tsc_rec_string(const char *s, size_t len)
{
    if (!s)
        return 0;
    if (len > TSC_DESC_MAX_PAYLOAD)
        len = TSC_DESC_MAX_PAYLOAD; /* long names are cut, not refused */
    return tsc_rec_intern(TSC_DESC_STRING, s, (uint16_t)len);
}

void tsc_rec_event(uint8_t kind, uint8_t flags, uint16_t aux, uint32_t desc,
                   uint64_t start_ns, uint64_t end_ns, uint64_t val)
{
    if (atomic_load_explicit(&tsc_rec_state_g, memory_order_acquire) != TSC_REC_ACTIVE)
        return;
    tsc_thread *t;
    if (__builtin_expect((desc == 0 && tsc_event_needs_desc(kind)) || kind == 0 ||
                             kind == TSC_EV_DESC || !(t = get_thread()),
                         0)) {
        atomic_fetch_add_explicit(&tsc_rec_dropped_extra_g, 1, memory_order_relaxed);
        return;
    }
    /* The call's exit record: it is no longer in flight (cleared even if
     * the ring is full, so the watchdog never reports a call that ended). */
    if (kind == TSC_EV_NCCL)
        atomic_store_explicit(&t->inflight_t0, 0, memory_order_relaxed);
    tsc_rec_thread_put(t, kind, flags, aux, desc, start_ns, end_ns, val);
}

void tsc_rec_set_exit_code(int code) { atomic_store(&g_exit_code, code); }

void tsc_rec_get_stats(tsc_rec_stats *s)
{
    memset(s, 0, sizeof *s);
    tsc_spin_lock(&g_drain_lock);
    s->events_written = g_events_written;
    s->bytes_written = g_dump.bytes_written;
    s->bytes_lost = g_dump.bytes_lost;
    snprintf(s->path, sizeof s->path, "%s", g_dump.path);
    tsc_spin_unlock(&g_drain_lock);
    s->threads = g_threads ? atomic_load(&g_nthreads) : 0;
    s->dropped = g_threads ? total_dropped() : atomic_load(&tsc_rec_dropped_extra_g);
}
