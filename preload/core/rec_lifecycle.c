/* The recorder's life in this process: the lazy set-up on the first record,
 * the exit, a forked child's fresh start.  The recorder's other jobs each
 * have a file, from the bottom up:
 *   rec_state     the state they share (rec_state.h; locking is described there)
 *   rec_config    the configuration, read once
 *   rec_chunks    the dump's own chunks: metadata and end marker
 *   rec_drain     from the threads' rings to the dump (or the other sink)
 *   rec_watchdog  NCCL calls in flight too long (TSCOPE_HANG_S)
 *   rec_writer    the writer thread that drains once per period
 *   rec_lifecycle this file
 *   rec_thread    the thread registry and the hot path's slow paths
 *   rec_events    the event API: descriptors and events
 * Each calls only files listed before it (rec_thread.h is the inline
 * hot path of rec_thread.c).  recorder.h is the contract; recorder_internal.h
 * what the library's other rooms use besides it. */
#include "recorder.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "comm_registry.h"
#include "config_warn.h"
#include "dump_file.h"
#include "fast_clock.h"
#include "identity.h"
#include "parts.h"
#include "rec_chunks.h"
#include "rec_counters.h"
#include "rec_meta.h"
#include "rec_state.h"
#include "rec_writer.h"
#include "recorder_internal.h"
#include "ring.h"
#include "self_cost.h"
#include "spin.h"

static TSC_TLS int tls_in_setup;

static void at_fork_child(void)
{
    /* Threads do not survive fork: the parent's rings, writer and file are
     * not ours.  Forget them (their memory stays shared copy-on-write and
     * untouched) and start afresh if this child records. */
    int s = atomic_load(&tsc_rec_state_g);
    if (s == TSC_REC_ACTIVE || s == TSC_REC_INITIALIZING || s == TSC_REC_CLOSED)
        atomic_store(&tsc_rec_state_g, TSC_REC_UNINIT);
    atomic_fetch_add(&tsc_rec_epoch_g, 1);
    if (tsc_rec_g.dump.fd >= 0)
        close(tsc_rec_g.dump.fd);
    tsc_rec_g.dump.fd = -1;
    tsc_rec_writer_after_fork();
    tsc_rec_g.threads = NULL;
    atomic_store(&tsc_rec_g.nthreads, 0);
    tsc_rec_g.events_written = 0;
    atomic_store(&tsc_rec_dropped_extra_g, 0);
    atomic_store(&tsc_rec_g.job_slots_retired, 0);
    tsc_cost_after_fork();
    atomic_store(&tsc_rec_g.drain_lock, 0);
    atomic_store(&tsc_rec_g.reg_lock, 0);
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
    if (tsc_rec_g.cfg.blackbox || !tsc_parts_saw_no_device_work() || tsc_comm_count_ever() > 0)
        return;
    unlink(tsc_rec_g.dump.path);
}

void tsc_rec_exit(void)
{
    int saved = errno;
    if (atomic_load(&tsc_rec_state_g) != TSC_REC_ACTIVE || !tsc_rec_owned_here())
        goto out;
    tsc_parts_exit(); /* the sampler's last sample goes into the final flush */
    tsc_rec_writer_stop();
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
    atomic_store(&tsc_rec_g.exit_code, status & 0xff);
    tsc_rec_exit();
}

/* The thread registry's array and the drain's scratch buffer: -1 (said
 * once) when memory is short. */
static int alloc_buffers(tsc_recorder *r)
{
    r->ring_bytes = (size_t)r->cfg.buffer_kb * 1024;
    r->max_threads = r->cfg.max_threads;
    r->threads = calloc(r->max_threads, sizeof *r->threads);
    tsc_ring probe;
    if (!r->threads || tsc_ring_init(&probe, r->ring_bytes) < 0) {
        tsc_warn_once("nomem", "out of memory at set-up; tracing is off");
        free(r->threads);
        r->threads = NULL;
        return -1;
    }
    r->scratch_slots = tsc_ring_capacity(&probe);
    r->scratch = probe.slots; /* reuse the allocation as the drain buffer */
    return 0;
}

static int setup(void)
{
    tsc_recorder *r = &tsc_rec_g;
    const tsc_config *cfg = &r->cfg;
    tsc_rec_load_config();
    if (cfg->disabled) {
        atomic_store(&tsc_rec_state_g, TSC_REC_OFF);
        return 0;
    }
    r->pid = getpid();
    tsc_clock_setup(cfg->os_clock);
    if (gethostname(r->host, sizeof r->host - 1) < 0)
        snprintf(r->host, sizeof r->host, "unknown");
    tsc_identity id;
    tsc_identity_from_env(&id, tsc_rec_getenv);
    uint64_t rt = tsc_clock_now(), mono = tsc_mono_ns();
    if (alloc_buffers(r) < 0)
        return -1;

    int rc = tsc_dump_open(&r->dump, cfg->out_dir, id.rank, r->host, (uint32_t)r->pid, rt);
    tsc_config_warn_flush(rc < 0 ? NULL : cfg->out_dir, id.run_id);
    if (rc < 0) {
        tsc_warn_once("open", "cannot create a dump in '%s': %s; tracing is off for this "
                      "process", cfg->out_dir, strerror(-rc));
        return -1;
    }
    tsc_meta_gather(r->host, &id, rt, mono);
    r->rank_id = id.rank;
    r->events_written = 0;
    if (cfg->blackbox && r->sink && r->sink->setup(cfg, &id, r->host, (uint32_t)r->pid) == 0)
        tsc_rec_meta(TSC_META_MODE, "blackbox");
    tsc_cost_start(mono);
    tsc_cost_set_budget(cfg->budget_cpct, cfg->flush_ms, cfg->nvml_ms != 0);
    tsc_rec_write_meta_chunk(0);

    static int registered; /* survives fork: handlers are inherited */
    if (!registered) {
        registered = 1;
        pthread_atfork(NULL, NULL, at_fork_child);
        on_exit(on_exit_handler, NULL);
    }
    tsc_parts_setup();
    tsc_rec_writer_start();
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

/* For tests and the benchmark: what was written and dropped so far. */
void tsc_rec_get_stats(tsc_rec_stats *s)
{
    memset(s, 0, sizeof *s);
    tsc_spin_lock(&tsc_rec_g.drain_lock);
    s->events_written = tsc_rec_g.events_written;
    s->bytes_written = tsc_rec_g.dump.bytes_written;
    s->bytes_lost = tsc_rec_g.dump.bytes_lost;
    snprintf(s->path, sizeof s->path, "%s", tsc_rec_g.dump.path);
    tsc_spin_unlock(&tsc_rec_g.drain_lock);
    s->threads = tsc_rec_g.threads ? atomic_load(&tsc_rec_g.nthreads) : 0;
    s->dropped = tsc_rec_g.threads ? tsc_rec_total_dropped()
                                   : atomic_load(&tsc_rec_dropped_extra_g);
}
