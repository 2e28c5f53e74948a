/* See rec_writer.h. */
#include "rec_writer.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "fast_clock.h"
#include "parts.h"
#include "rec_chunks.h"
#include "rec_drain.h"
#include "rec_state.h"
#include "rec_watchdog.h"
#include "recorder.h"
#include "recorder_internal.h"
#include "self_cost.h"
#include "spin.h"

static int g_wake_fd = -1;
static pthread_t g_writer;
static int g_writer_started;
static _Atomic int g_writer_stop;
static _Atomic int g_writer_running;

/* One period's work besides the drain, under the drain lock: the
 * watchdog, then what the sink (or the dump's metadata) wants per period. */
static size_t locked_period_work(int periodic, char *hang_msg, size_t cap,
                                 uint64_t *meta_periods)
{
    const tsc_config *cfg = &tsc_rec_g.cfg;
    const tsc_sink *sink = tsc_rec_g.sink;
    size_t hang_len = 0;
    if (periodic && cfg->hang_s)
        hang_len = tsc_rec_check_hangs(hang_msg, cap);
    if (sink && sink->term_pending()) {
        sink->term(&tsc_rec_g.dump, tsc_rec_total_dropped()); /* a SIGTERM handler waits for it */
    } else if (periodic && tsc_rec_sink_on()) {
        sink->period(&tsc_rec_g.dump, tsc_rec_total_dropped());
        /* The summaries' metadata changes little: once a minute keeps
         * the file small between steps. */
        if (++*meta_periods * cfg->flush_ms >= 60000) {
            *meta_periods = 0;
            tsc_rec_write_meta_chunk(0);
        }
    } else if (periodic) {
        tsc_rec_write_meta_chunk(0);
    }
    return hang_len;
}

static void *writer_main(void *arg)
{
    (void)arg;
    prctl(PR_SET_NAME, "tscope-writer", 0, 0, 0);
    tsc_cost_thread_begin(TSC_COST_WRITER);
    atomic_store(&g_writer_running, 1);
    tsc_cost_calibrate(); /* here, not on the job's thread at set-up */
    uint64_t period = (uint64_t)tsc_rec_g.cfg.flush_ms * 1000000ull;
    uint64_t next_flush = tsc_mono_ns() + period;
    uint64_t next_clock = tsc_mono_ns() + tsc_clock_tick_period_ns();
    uint64_t meta_periods = 0;
    for (;;) {
        const tsc_sink *sink = tsc_rec_g.sink;
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
                              {.fd = sink ? sink->poll_fd() : -1, .events = POLLIN}};
        int r = poll(p, p[1].fd >= 0 ? 2 : 1, wait_ms);
        if (r > 0 && (p[0].revents & POLLIN)) {
            uint64_t v;
            ssize_t n = read(g_wake_fd, &v, sizeof v);
            (void)n;
        }
        if (r > 0 && p[1].fd >= 0 && (p[1].revents & POLLIN))
            sink->serve(); /* a scrape of black-box mode's /metrics */
        if (atomic_load(&g_writer_stop))
            break;
        /* A half-full ring only needs draining; the CUPTI hand-over and the
         * metadata rewrite happen once per period, which keeps the file
         * near 32 bytes per event however busy the rings are. */
        int periodic = tsc_mono_ns() >= next_flush ||
                       (sink && (sink->signal_pending() || sink->term_pending()));
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
        tsc_spin_lock(&tsc_rec_g.drain_lock);
        tsc_rec_drain_all(0, periodic);
        size_t hang_len = locked_period_work(periodic, hang_msg, sizeof hang_msg, &meta_periods);
        tsc_spin_unlock(&tsc_rec_g.drain_lock);
        /* Outside the lock: a slow stderr must not hold up a flush. */
        if (hang_len) {
            ssize_t w = write(STDERR_FILENO, hang_msg, hang_len);
            (void)w;
        }
    }
    tsc_cost_thread_end(TSC_COST_WRITER);
    return NULL;
}

void tsc_rec_writer_start(void)
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

void tsc_rec_writer_stop(void)
{
    if (!g_writer_started)
        return;
    atomic_store(&g_writer_stop, 1);
    tsc_rec_wake_writer();
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 3;
    if (pthread_timedjoin_np(g_writer, NULL, &deadline) == 0)
        g_writer_started = 0;
}

void tsc_rec_writer_after_fork(void)
{
    if (g_wake_fd >= 0)
        close(g_wake_fd);
    g_wake_fd = -1;
    g_writer_started = 0;
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

int tsc_rec_writer_alive(void)
{
    return g_writer_started && atomic_load(&g_writer_running) && !atomic_load(&g_writer_stop);
}
