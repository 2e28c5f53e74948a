/* Black-box mode: see blackbox.h and docs/blackbox.md.
 *
 * Why the work sits here and not on the NCCL hot path: the wrappers record
 * exactly as in the default mode (one ring slot per call); only the writer
 * thread changes where drained slots go.  So the added cost per call is
 * zero, and everything that may block (file IO, the trigger folder on a
 * shared file system) happens on the writer thread. */
#include "blackbox.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bb_http.h"
#include "bb_metrics.h"
#include "bb_stall.h"
#include "bb_steps.h"
#include "bb_store.h"
#include "bb_trigger.h"
#include "fast_clock.h"
#include "rec_meta.h"
#include "self_cost.h"
#include "recorder.h"
#include "recorder_internal.h"
#include "sink.h"
#include "spin.h"

#define MAX_PENDING 64
#define MAX_WINDOWS 4096
#define SUMMARY_BATCH 1024

typedef struct window {       /* a window this rank wrote */
    char dir[4200], path[4400];
    uint64_t bytes;
} window;

static struct {
    int on;
    const tsc_config *cfg;
    int rank;
    char term_name[BB_NAME_MAX]; /* the SIGTERM window's id: the same on every rank */
    const char *host;
    uint32_t pid;
    char trig_dir[4200];
    bb_store store;
    bb_steps steps;
    bb_trigger pending[MAX_PENDING];
    int npending;
    uint64_t *seen;           /* hashes of trigger names already handled */
    size_t nseen, seen_cap;
    window *windows;          /* oldest first */
    size_t nwindows;
    uint64_t windows_bytes;
    uint64_t closed_last_period; /* steps ended by the previous period */
    uint64_t quiet_until;     /* no new anomaly trigger up to this step */
    uint64_t captures, dropped_windows;
    int http_fd;              /* /metrics listening socket, -1 none */
    time_t started;           /* set-up time: older triggers are a past job's */
    bb_metrics metrics;
    int device_known;         /* the GPU's peak FLOP/s handed to the step tracker */
    uint64_t term_seen_ns;    /* when a "term" trigger was last taken, 0 never */
    int summary_failed;       /* a summary write failed (said once) */
    uint64_t popped_start;    /* start of the last step summarized, 0 none */
    tsc_step_summary batch[SUMMARY_BATCH];
    bb_step_extra xbatch[SUMMARY_BATCH];
    tsc_step_extra xrecs[SUMMARY_BATCH]; /* xbatch as written */
    tsc_dump *dump;           /* the summary file (set at the first period) */
} g;

static void write_summaries(tsc_dump *dump, uint64_t before_ns);

static _Atomic int g_signal;
static _Atomic int g_term; /* SIGTERM window: 0 not asked, 1 asked, 2 written */

int tsc_bb_on(void) { return g.on; }

size_t tsc_bb_memory_bytes(void) { return g.on ? bb_store_bytes(&g.store) : 0; }

int tsc_bb_http_fd(void) { return g.on ? g.http_fd : -1; }

void tsc_bb_http_serve(void)
{
    if (g.on && g.http_fd >= 0)
        bb_http_serve(g.http_fd, g.metrics.path);
}

void tsc_bb_signal(void)
{
    atomic_store_explicit(&g_signal, 1, memory_order_relaxed);
    tsc_rec_wake_writer();
}

int tsc_bb_signal_pending(void) { return atomic_load_explicit(&g_signal, memory_order_relaxed); }

/* The SIGTERM window's id, "term-<run id>-<restart>": the same on every
 * rank of one run, which a scheduler ends once (docs/blackbox.md).  A job
 * without a run id gets none here (see term_trigger). */
static void term_name(const tsc_identity *id)
{
    g.term_name[0] = 0;
    if (!strcmp(id->run_id, "none") || !id->run_id[0])
        return;
    char run[64];
    size_t n = 0;
    for (const char *c = id->run_id; *c && n < sizeof run - 1; c++)
        run[n++] = (char)((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                                  (*c >= '0' && *c <= '9') || *c == '.' || *c == '_' || *c == '-'
                              ? *c
                              : '_');
    run[n] = 0;
    snprintf(g.term_name, sizeof g.term_name, "term-%s-%d", run, id->restart < 0 ? 0 : id->restart);
}

int tsc_bb_setup(const tsc_config *cfg, const tsc_identity *id, const char *host, uint32_t pid)
{
    if (g.on) { /* a forked child's copy of its parent's state */
        if (g.http_fd >= 0)
            close(g.http_fd);
        bb_store_free(&g.store);
        bb_steps_free(&g.steps);
        free(g.seen);
        free(g.windows);
    }
    memset(&g, 0, sizeof g);
    atomic_store(&g_term, 0);
    g.cfg = cfg;
    g.rank = id->rank;
    g.host = host;
    g.pid = pid;
    size_t ram = (size_t)cfg->bb_mb << 20;
    g.seen_cap = 1024;
    g.seen = calloc(g.seen_cap, sizeof *g.seen);
    g.windows = calloc(MAX_WINDOWS, sizeof *g.windows);
    if (!g.seen || !g.windows || bb_store_init(&g.store, ram - ram / 8, ram / 8) < 0 ||
        bb_steps_init(&g.steps, cfg->bb_steps, cfg->bb_median, cfg->bb_k_pct, cfg->bb_run) < 0) {
        tsc_warn_once("bb-nomem", "black-box mode: cannot reserve %u MiB (TSCOPE_BB_MB); "
                      "recording in the default mode instead", cfg->bb_mb);
        bb_store_free(&g.store);
        bb_steps_free(&g.steps);
        free(g.seen);
        free(g.windows);
        memset(&g, 0, sizeof g);
        return -1;
    }
    snprintf(g.trig_dir, sizeof g.trig_dir, "%s/%s", cfg->out_dir, BB_TRIGGER_DIR);
    term_name(id);
    g.started = time(NULL);
    bb_metrics_init(&g.metrics, cfg, id, host);
    g.http_fd = cfg->metrics_port ? bb_http_listen(cfg->metrics_port, id->local_rank) : -1;
    g.on = 1;
    return 0;
}

static void learn_device(void);

void tsc_bb_take(uint32_t tid, const tsc_event *slots, size_t n)
{
    learn_device(); /* before GEMMs are weighed by the device's peak */
    bb_steps_take(&g.steps, tid, slots, n);
    bb_store_take(&g.store, tid, slots, n);
    /* Many short steps in one flush period: write their summaries now
     * rather than lose them (a late record of another thread then misses
     * its step's sums; the step itself is not lost). */
    if (g.dump && bb_steps_backlog(&g.steps) > g.steps.mask / 2)
        write_summaries(g.dump, UINT64_MAX);
}

/* ------------------------------------------------------- trigger names */

static uint64_t name_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h | 1;
}

/* 1 the first time name is seen (remembered in an open-addressing set). */
static int first_sight(const char *name)
{
    if (g.nseen * 2 >= g.seen_cap) {
        uint64_t *n = calloc(g.seen_cap * 2, sizeof *n);
        if (!n)
            return 0; /* cannot remember more: handle no more triggers */
        for (size_t i = 0; i < g.seen_cap; i++)
            for (size_t j = g.seen[i] & (g.seen_cap * 2 - 1); g.seen[i]; j = (j + 1) & (g.seen_cap * 2 - 1))
                if (!n[j]) {
                    n[j] = g.seen[i];
                    break;
                }
        free(g.seen);
        g.seen = n;
        g.seen_cap *= 2;
    }
    uint64_t h = name_hash(name);
    size_t j = h & (g.seen_cap - 1);
    while (g.seen[j]) {
        if (g.seen[j] == h)
            return 0;
        j = (j + 1) & (g.seen_cap - 1);
    }
    g.seen[j] = h;
    g.nseen++;
    return 1;
}

/* ------------------------------------------------------------ triggers */

/* Publish a trigger this rank fired.  1 when this rank created it. */
static int fire(bb_trigger *t)
{
    char text[512];
    bb_trigger_format(t, text, sizeof text);
    int rc = bb_trigger_publish(g.trig_dir, t->name, text);
    if (rc < 0)
        tsc_warn_once("bb-trigger", "cannot create a trigger in %s: %s; this rank writes its "
                      "own window only", g.trig_dir, strerror(-rc));
    if (rc < 0 && first_sight(t->name) && g.npending < MAX_PENDING)
        g.pending[g.npending++] = *t; /* the others cannot see it: at least our own window */
    return rc == 0;
}

/* A trigger for steps [first, last] of this rank, with the opener
 * sequence number of `first` so other ranks can translate it. */
static void range_trigger(bb_trigger *t, const char *reason, uint64_t first, uint64_t last)
{
    t->has_steps = 1;
    t->first = first;
    t->last = last;
    long long seq = bb_steps_seq(&g.steps, first);
    t->has_seq = seq >= 0;
    t->seq = seq >= 0 ? (uint64_t)seq : 0;
    snprintf(t->reason, sizeof t->reason, "%s", reason);
    t->rank = g.rank;
}

static uint64_t back(uint64_t step, uint64_t n) { return step > n ? step - n : 0; }

static void check_anomaly(void)
{
    bb_steps *s = &g.steps;
    if (!s->anomaly_pending)
        return;
    s->anomaly_pending = 0;
    uint64_t k = s->anomaly_step;
    if (k <= g.quiet_until && g.quiet_until)
        return;
    bb_trigger t = {0};
    snprintf(t.name, sizeof t.name, "anomaly-s%" PRIu64, k);
    range_trigger(&t, "anomaly", back(k, g.cfg->bb_pre), s->anomaly_last + g.cfg->bb_post);
    snprintf(t.note, sizeof t.note, "rank %d: steps %" PRIu64 "-%" PRIu64 " over %.1fx the "
             "median %.3f ms (step %" PRIu64 ": %.3f ms)", g.rank, k, s->anomaly_last,
             g.cfg->bb_k_pct / 100.0, s->anomaly_median_ns / 1e6, s->anomaly_last,
             s->anomaly_ns / 1e6);
    g.quiet_until = t.last + g.cfg->bb_median;
    if (fire(&t))
        tsc_say("%s; capture window %s requested (steps %" PRIu64 "-%" PRIu64 ")", t.note,
                t.name, t.first, t.last);
}

void tsc_bb_hang(uint64_t comm, uint64_t seq, const char *what)
{
    if (!g.on)
        return;
    bb_trigger t = {0};
    snprintf(t.name, sizeof t.name, "hang-c%016" PRIx64 "-q%" PRIu64, comm, seq);
    uint64_t now = g.steps.closed;
    range_trigger(&t, "hang", back(now, g.cfg->bb_pre), now);
    t.now = 1;
    snprintf(t.note, sizeof t.note, "rank %d: %s on comm %016" PRIx64 " seq %" PRIu64
             " in flight for %u s", g.rank, what, comm, seq, g.cfg->hang_s);
    fire(&t);
}

static void check_signal(void)
{
    if (!atomic_exchange(&g_signal, 0))
        return;
    bb_trigger t = {0};
    snprintf(t.name, sizeof t.name, "signal-r%d-%" PRIu64, g.rank < 0 ? 0 : g.rank,
             tsc_now_ns() / 1000000);
    /* The last steps that ended: every rank can write all of them (a step
     * still running would end at different points on different ranks). */
    uint64_t last = back(g.steps.closed, 1);
    range_trigger(&t, "signal", back(last, g.cfg->bb_pre + g.cfg->bb_post), last);
    snprintf(t.note, sizeof t.note, "SIGUSR2 to rank %d", g.rank);
    if (fire(&t))
        tsc_say("SIGUSR2: capture window %s requested (steps %" PRIu64 "-%" PRIu64 ")", t.name,
                t.first, t.last);
}

/* "next=K": the first rank to see it fixes the steps for all, in
 * <name>.steps (created whole; a rank that comes later reads it). */
static int resolve_next(bb_trigger *t)
{
    char path[4400], text[256];
    snprintf(path, sizeof path, "%s/%s.steps", g.trig_dir, t->name);
    bb_trigger r = *t;
    r.has_steps = 1;
    r.first = g.steps.closed + 1;
    r.last = r.first + t->next - 1;
    r.has_seq = 0;
    snprintf(text, sizeof text, "steps=%" PRIu64 "-%" PRIu64 "\n", r.first, r.last);
    char name[BB_NAME_MAX + 8];
    snprintf(name, sizeof name, "%s.steps", t->name);
    int rc = bb_trigger_publish(g.trig_dir, name, text);
    if (rc == 1) { /* another rank was first */
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd < 0 ? -1 : read(fd, text, sizeof text - 1);
        if (fd >= 0)
            close(fd);
        char why[128];
        if (n <= 0 || bb_trigger_parse(text, (size_t)n, &r, why, sizeof why) < 0 || !r.has_steps)
            return -1;
    } else if (rc < 0) {
        return -1;
    }
    t->has_steps = 1;
    t->first = r.first;
    t->last = r.last;
    return 0;
}

static void handle_trigger_file(const char *name)
{
    char path[4400], text[4097], why[160] = "";
    snprintf(path, sizeof path, "%s/%s", g.trig_dir, name);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    ssize_t n = fd < 0 ? -1 : read(fd, text, sizeof text);
    if (fd >= 0)
        close(fd);
    bb_trigger t;
    snprintf(t.name, sizeof t.name, "%s", name);
    if (n < 0)
        snprintf(why, sizeof why, "cannot read it: %s", strerror(errno));
    else if (bb_trigger_parse(text, (size_t)n, &t, why, sizeof why) == 0 && !t.has_steps &&
             resolve_next(&t) < 0)
        snprintf(why, sizeof why, "cannot fix the steps of next=%u in %s.steps", t.next, name);
    if (why[0]) {
        if (g.rank <= 0)
            tsc_say("trigger %s: %s; ignored (the job goes on)", path, why);
        return;
    }
    /* Steps are numbered the same on every rank when the ranks agree on the
     * opener; the opener's sequence number makes sure. */
    if (t.has_seq) {
        long long mine = bb_steps_by_seq(&g.steps, t.seq);
        if (mine >= 0 && (uint64_t)mine != t.first) {
            uint64_t len = t.last - t.first;
            t.first = (uint64_t)mine;
            t.last = t.first + len;
        }
    }
    if (!strcmp(t.reason, "anomaly") && t.last + g.cfg->bb_median > g.quiet_until)
        g.quiet_until = t.last + g.cfg->bb_median;
    if (!strcmp(t.reason, "term"))
        g.term_seen_ns = tsc_now_ns();
    if (g.npending < MAX_PENDING)
        g.pending[g.npending++] = t;
    else
        tsc_warn_once("bb-pending", "more than %d capture windows waiting; trigger %s ignored",
                      MAX_PENDING, name);
}

static void scan_triggers(void)
{
    DIR *d = opendir(g.trig_dir);
    if (!d)
        return; /* no trigger yet */
    struct dirent *e;
    struct stat st;
    while ((e = readdir(d))) {
        if (!bb_trigger_name_ok(e->d_name) || !first_sight(e->d_name))
            continue;
        /* A job run again in the same folder must not answer the last
         * one's triggers.  One written before this process recorded
         * anything concerns steps it does not have (a rank that has not
         * reached NCCL yet holds the others at their first collective). */
        if (fstatat(dirfd(d), e->d_name, &st, 0) == 0 && st.st_mtime < g.started - 2)
            continue;
        handle_trigger_file(e->d_name);
    }
    closedir(d);
}

/* ------------------------------------------------------------- windows */

static void drop_oldest_window(void)
{
    window *w = &g.windows[0];
    unlink(w->path);
    rmdir(w->dir); /* the last rank out removes the folder */
    g.windows_bytes -= w->bytes;
    g.dropped_windows++;
    if (g.rank <= 0)
        tsc_say("retention: dropped the oldest capture window %s (over TSCOPE_BB_KEEP_WINDOWS=%u "
                "or TSCOPE_BB_KEEP_MB=%u)", w->dir, g.cfg->bb_keep_windows, g.cfg->bb_keep_mb);
    memmove(w, w + 1, (g.nwindows - 1) * sizeof *w);
    g.nwindows--;
}

static void keep_window(const tsc_dump *d, const char *dir)
{
    if (g.nwindows == MAX_WINDOWS)
        drop_oldest_window();
    window *w = &g.windows[g.nwindows++];
    snprintf(w->dir, sizeof w->dir, "%s", dir);
    snprintf(w->path, sizeof w->path, "%s", d->path);
    w->bytes = d->bytes_written;
    g.windows_bytes += w->bytes;
    while (g.nwindows > 1 && (g.nwindows > g.cfg->bb_keep_windows ||
                              g.windows_bytes > (uint64_t)g.cfg->bb_keep_mb << 20))
        drop_oldest_window();
}

static int write_window(const bb_trigger *t, uint64_t first, uint64_t last, uint64_t lo,
                        uint64_t hi)
{
    char dir[4200], steps[64];
    snprintf(dir, sizeof dir, "%s/capture-%s", g.cfg->out_dir, t->name);
    snprintf(steps, sizeof steps, "%" PRIu64 "-%" PRIu64, first, last);
    tsc_dump d = {.fd = -1};
    int rc = tsc_dump_open(&d, dir, g.rank, g.host, g.pid, tsc_now_ns());
    if (rc < 0) {
        tsc_say("capture window %s: cannot create a file in %s: %s; the job goes on", t->name,
                dir, strerror(-rc));
        return -1;
    }
    const char *k[4] = {TSC_META_CAPTURE, TSC_META_CAPTURE_STEPS, TSC_META_CAPTURE_REASON,
                        TSC_META_CAPTURE_NOTE};
    const char *v[4] = {t->name, steps, t->reason, t->note};
    static char meta[TSC_META_PAYLOAD_MAX];
    size_t len = tsc_rec_meta_payload(meta, sizeof meta, k, v, 4, 0);
    if (len)
        tsc_dump_write_chunk(&d, TSC_CHUNK_META, 0, meta, (uint32_t)len);
    long long n = bb_store_write_range(&g.store, &d, lo, hi);
    const char *ek[2] = {TSC_META_END_REASON, TSC_META_CAPTURE};
    const char *ev[2] = {"capture", t->name};
    len = tsc_meta_encode(meta, sizeof meta, ek, ev, 2);
    if (n >= 0 && len)
        tsc_dump_write_chunk(&d, TSC_CHUNK_END, 0, meta, (uint32_t)len);
    if (n < 0 || d.bytes_lost)
        tsc_say("capture window %s: writing %s failed: %s; the window is incomplete, the job "
                "goes on", t->name, d.path, strerror(d.last_errno ? d.last_errno : EIO));
    tsc_dump_close(&d);
    g.captures++;
    keep_window(&d, dir);
    return 0;
}

/* Write t if due (its last step ended a period ago, or now=1, or at
 * exit).  1 when it is done with (written or given up). */
static int try_window(const bb_trigger *t, int at_exit)
{
    uint64_t first = t->first, last = t->last, lo, hi, unused;
    int due = at_exit || t->now || last < g.closed_last_period;
    if (!due)
        return 0;
    if (last > g.steps.closed)
        last = g.steps.closed; /* the steps that exist so far */
    uint64_t oldest = bb_steps_oldest(&g.steps);
    /* Records of steps whose start was evicted from memory are gone too. */
    while (oldest <= last && bb_steps_bounds(&g.steps, oldest, &lo, &unused) == 0 &&
           lo < g.store.oldest_ns && oldest < g.steps.closed)
        oldest++;
    if (!g.steps.have_opener || first > last || last < oldest) {
        tsc_say("capture window %s: steps %" PRIu64 "-%" PRIu64 " are no longer (or not yet) in "
                "memory (rank %d keeps steps %" PRIu64 "-%" PRIu64 "); nothing written, the job "
                "goes on", t->name, t->first, t->last, g.rank, oldest, g.steps.closed);
        return 1;
    }
    if (first < oldest) {
        tsc_say("capture window %s: steps %" PRIu64 "-%" PRIu64 " are gone from memory on rank "
                "%d; writing %" PRIu64 "-%" PRIu64, t->name, first, oldest - 1, g.rank, oldest,
                last);
        first = oldest;
    }
    bb_steps_bounds(&g.steps, first, &lo, &unused);
    bb_steps_bounds(&g.steps, last, &unused, &hi);
    if (first == 0)
        lo = 0;
    write_window(t, first, last, lo, hi);
    return 1;
}

static void run_pending(int at_exit)
{
    int k = 0;
    for (int i = 0; i < g.npending; i++)
        if (!try_window(&g.pending[i], at_exit))
            g.pending[k++] = g.pending[i];
    g.npending = k;
}

/* ------------------------------------------------------------ summaries */

static void write_summaries(tsc_dump *dump, uint64_t before_ns)
{
    size_t n;
    while ((n = bb_steps_pop(&g.steps, before_ns, g.batch, g.xbatch, SUMMARY_BATCH)) > 0) {
        bb_stall_fill(&g.store, &g.steps, g.batch, g.xbatch, n,
                      g.popped_start ? g.popped_start : g.batch[0].start_ns);
        g.popped_start = g.batch[n - 1].start_ns;
        bb_metrics_steps(&g.metrics, g.batch, g.xbatch, n);
        /* The extras first: a reader following the file has a step's extra
         * by the time it has its summary (docs/format.md). */
        size_t nx = bb_steps_extra_records(&g.steps, g.batch, g.xbatch, n, g.xrecs);
        int rc = nx ? tsc_dump_write_chunk(dump, TSC_CHUNK_STEP_EXTRA, 0, g.xrecs,
                                           (uint32_t)(nx * sizeof g.xrecs[0]))
                    : 0;
        if (tsc_dump_write_chunk(dump, TSC_CHUNK_STEPS, 0, g.batch,
                                 (uint32_t)(n * sizeof g.batch[0])) < 0)
            rc = -1;
        if (rc < 0 && !g.summary_failed) {
            g.summary_failed = 1;
            tsc_say("cannot write step summaries to %s: %s; they are lost while it fails (the "
                    "loss is counted in the file), the job goes on",
                    dump->path, strerror(dump->last_errno ? dump->last_errno : EIO));
        }
    }
}

/* The metrics file, with what the writer knows now. */
static void write_metrics(uint64_t dropped_total)
{
    uint64_t oldest = 0;
    bb_metrics_now now = {.steps = &g.steps, .captures = g.captures,
                          .dropped = dropped_total + g.store.dropped,
                          .capture_bytes = g.windows_bytes};
    tsc_rec_inflight(&now.in_flight, &oldest);
    tsc_cost_inputs in;
    tsc_cost_figure cost;
    tsc_rec_cost_inputs(&in);
    tsc_cost_measure(&in, &cost);
    now.cost = &cost;
    now.cost_level = tsc_cost_level();
    uint64_t t = tsc_now_ns();
    now.oldest_in_flight_s = oldest && t > oldest ? (t - oldest) / 1e9 : 0;
    bb_metrics_write(&g.metrics, &now);
}

/* The device's name appears when CUPTI sets up (META device_name): from
 * then on GEMMs are weighed by its peak. */
static void learn_device(void)
{
    char name[256];
    if (g.device_known || tsc_meta_get(TSC_META_DEVICE_NAME, name, sizeof name) < 0)
        return;
    bb_steps_set_device(&g.steps, name);
    g.device_known = 1;
}

/* Memory bound by steps: records older than the last TSCOPE_BB_STEPS
 * steps go, whatever room is left. */
static void evict_old_steps(void)
{
    uint64_t lo, hi;
    if (g.steps.closed > g.cfg->bb_steps &&
        bb_steps_bounds(&g.steps, g.steps.closed - g.cfg->bb_steps, &lo, &hi) == 0)
        bb_store_evict_before(&g.store, lo);
}

void tsc_bb_period(tsc_dump *dump, uint64_t dropped_total)
{
    if (!g.on)
        return;
    g.dump = dump;
    learn_device();
    bb_steps_set_dropped(&g.steps, dropped_total);
    uint64_t period = (uint64_t)g.cfg->flush_ms * 1000000ull, now = tsc_now_ns();
    scan_triggers(); /* first: another rank may have fired for the same step */
    check_anomaly();
    check_signal();
    scan_triggers(); /* our own new ones */
    run_pending(0);
    g.closed_last_period = g.steps.closed;
    write_summaries(dump, now > period ? now - period : 0);
    evict_old_steps();
    write_metrics(dropped_total);
}

void tsc_bb_exit(tsc_dump *dump)
{
    if (!g.on)
        return;
    check_anomaly();
    scan_triggers();
    run_pending(1);
    write_summaries(dump, UINT64_MAX);
    write_metrics(g.steps.dropped_total);
    char nb[24];
    tsc_rec_meta("capture_windows", tsc_u64_to_str(g.captures, nb));
    tsc_rec_meta("capture_windows_dropped", tsc_u64_to_str(g.dropped_windows, nb));
}

/* ------------------------------------------------------------- SIGTERM */

int tsc_bb_term_pending(void) { return atomic_load(&g_term) == 1; }

int tsc_bb_term_window(unsigned ms)
{
    if (!g.on || !ms || !tsc_rec_writer_alive())
        return 0;
    int expect = 0;
    atomic_compare_exchange_strong(&g_term, &expect, 1);
    tsc_rec_wake_writer();
    struct timespec now, end, nap = {.tv_nsec = 1000000};
    clock_gettime(CLOCK_MONOTONIC, &end);
    end.tv_sec += ms / 1000;
    end.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (end.tv_nsec >= 1000000000L) {
        end.tv_sec++;
        end.tv_nsec -= 1000000000L;
    }
    while (atomic_load(&g_term) != 2) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec > end.tv_sec || (now.tv_sec == end.tv_sec && now.tv_nsec >= end.tv_nsec))
            return 0;
        nanosleep(&nap, NULL);
    }
    return 1;
}

static int term_trigger_pending(void)
{
    for (int i = 0; i < g.npending; i++)
        if (!strcmp(g.pending[i].reason, "term"))
            return 1;
    return 0;
}

/* The last steps that ended on every rank, as the window of a SIGTERM: the job's
 * trigger if another rank made it already, else ours, under the run's
 * name (the same on every rank, so ranks ended together make one window),
 * or, without a run id or when that name is a past run's, this rank's. */
static void term_trigger(void)
{
    scan_triggers();
    /* Pending, or written in the last minute: this SIGTERM is part of the
     * same ending (a launcher stopping the ranks one after the other). */
    if (term_trigger_pending() || (g.term_seen_ns && tsc_now_ns() - g.term_seen_ns < 60000000000ull))
        return;
    bb_trigger t = {0};
    /* Not our last closed step but the one before: another rank can still
     * be inside the last call of our last step (we returned from it, it
     * has not yet), and so never end it; every rank has ended the step
     * before, since we left its last collective only once all entered it. */
    uint64_t last = back(g.steps.closed, 2);
    range_trigger(&t, "term", back(last, g.cfg->bb_pre + g.cfg->bb_post), last);
    t.now = 1;
    snprintf(t.note, sizeof t.note, "SIGTERM to rank %d", g.rank);
    if (g.term_name[0]) {
        snprintf(t.name, sizeof t.name, "%s", g.term_name);
        fire(&t);
        scan_triggers();
        if (term_trigger_pending())
            return;
    }
    snprintf(t.name, sizeof t.name, "term-r%d-%" PRIu64, g.rank < 0 ? 0 : g.rank,
             tsc_now_ns() / 1000000);
    fire(&t);
    scan_triggers();
}

void tsc_bb_term(tsc_dump *dump, uint64_t dropped_total)
{
    if (!g.on || atomic_load(&g_term) != 1)
        return;
    g.dump = dump;
    bb_steps_set_dropped(&g.steps, dropped_total);
    term_trigger();
    int k = 0;
    for (int i = 0; i < g.npending; i++)
        if (strcmp(g.pending[i].reason, "term") || !try_window(&g.pending[i], 1))
            g.pending[k++] = g.pending[i];
    g.npending = k;
    write_summaries(dump, UINT64_MAX);
    write_metrics(dropped_total);
    atomic_store(&g_term, 2);
}

const tsc_sink tsc_bb_sink = {
    .name = "blackbox",
    .setup = tsc_bb_setup,
    .on = tsc_bb_on,
    .memory_bytes = tsc_bb_memory_bytes,
    .take = tsc_bb_take,
    .period = tsc_bb_period,
    .hang = tsc_bb_hang,
    .exit = tsc_bb_exit,
    .poll_fd = tsc_bb_http_fd,
    .serve = tsc_bb_http_serve,
    .signal_pending = tsc_bb_signal_pending,
    .term_pending = tsc_bb_term_pending,
    .term = tsc_bb_term,
};
