/* End to end: the built libtscope_preload.so under LD_PRELOAD in front of
 * a stub NCCL, driven by nccl_driver in the patterns a training job uses.
 * Each case runs the driver in a fresh output folder and reads the dump
 * back with the independent scanner in dump_scan.c. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "comm_id.h"
#include "dump_scan.h"
#include "nccl_abi.h"

static const char *driver, *preload;
static char outdir[512];
static char errbuf[8192];

/* Runs the driver with LD_PRELOAD and extra NAME=VALUE settings (NULL
 * terminated); returns the wait status; stderr lands in errbuf. */
static const char *program; /* what run_driver runs; the driver by default */

static int run_driver(const char *mode, const char *const *env)
{
    static int serial;
    snprintf(outdir, sizeof outdir, "%s/run%d", getenv("TSC_TEST_TMP"), serial++);
    int pipefd[2];
    if (pipe(pipefd) < 0)
        return -1;
    pid_t p = fork();
    if (p == 0) {
        close(pipefd[0]);
        dup2(pipefd[1], 2);
        setenv("LD_PRELOAD", preload, 1);
        setenv("TSCOPE_OUT", outdir, 1);
        setenv("TSCOPE_RUN_ID", "t-run", 1);
        /* These tests count events and thread slots exactly: no telemetry
         * sampler (tests/testbed and test_telemetry_e2e cover it). */
        setenv("TSCOPE_NVML_MS", "0", 1);
        /* An ASan build preloads an instrumented library in front of the
         * runtime: tell ASan that is intended. */
        setenv("ASAN_OPTIONS", "verify_asan_link_order=0:detect_leaks=0", 1);
        for (const char *const *e = env; e && *e; e += 2)
            setenv(e[0], e[1], 1);
        const char *exe = program ? program : driver;
        execl(exe, exe, mode, (char *)NULL);
        _exit(127);
    }
    close(pipefd[1]);
    size_t n = 0;
    ssize_t r;
    while ((r = read(pipefd[0], errbuf + n, sizeof errbuf - 1 - n)) > 0)
        n += (size_t)r;
    errbuf[n] = '\0';
    close(pipefd[0]);
    int st = 0;
    waitpid(p, &st, 0);
    if (errbuf[0])
        fprintf(stderr, "[driver %s stderr]\n%s", mode, errbuf);
    return st;
}

static void load_only_dump(dump_scan *s)
{
    char path[1024];
    assert_int_equal(dump_scan_count_files(outdir, path, sizeof path), 1);
    assert_int_equal(dump_scan_load(s, path), 0);
    assert_int_equal(s->bad_crc, 0);
    assert_int_equal(s->bad_layout, 0);
}

static const tsc_desc_nccl_call *call_of(const dump_scan *s, const scan_event *e)
{
    const scan_desc *d = dump_scan_desc(s, e->ev.desc);
    assert_non_null(d);
    assert_int_equal(d->type, TSC_DESC_NCCL_CALL);
    assert_int_equal(d->len, sizeof(tsc_desc_nccl_call));
    return (const tsc_desc_nccl_call *)d->payload;
}

static uint64_t world_id(void)
{
    tsc_nccl_unique_id id;
    memset(&id, 0, sizeof id);
    snprintf(id.internal, sizeof id.internal, "driver-job");
    return tsc_comm_id_from_unique_ids(&id, 1, sizeof id);
}

/* The NCCL events of a dump, in file order. */
static size_t nccl_events(const dump_scan *s, const scan_event **out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < s->nevents && n < max; i++)
        if (s->events[i].ev.kind == TSC_EV_NCCL)
            out[n++] = &s->events[i];
    return n;
}

static void test_basic_run(void **state)
{
    (void)state;
    static const char *const env[] = {"RANK", "1", NULL};
    int st = run_driver("basic", env);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    static dump_scan s;
    load_only_dump(&s);

    assert_int_equal(s.end_chunks, 1);
    assert_string_equal(dump_scan_meta(&s, TSC_META_END_REASON), "exit");
    assert_string_equal(dump_scan_meta(&s, TSC_META_RANK), "1");
    assert_string_equal(dump_scan_meta(&s, TSC_META_RUN_ID), "t-run");
    assert_string_equal(dump_scan_meta(&s, TSC_META_RUN_ID_SOURCE), "TSCOPE_RUN_ID");
    assert_string_equal(dump_scan_meta(&s, TSC_META_NCCL_VERSION), "22809");
    assert_string_equal(dump_scan_meta(&s, TSC_META_EVENTS), "25");
    assert_string_equal(dump_scan_meta(&s, TSC_META_EXIT_CODE), "0"); /* return from main */
    assert_non_null(dump_scan_meta(&s, TSC_META_END_REALTIME));
    assert_string_equal(dump_scan_meta(&s, TSC_META_DROPPED), "0");
    assert_string_equal(dump_scan_meta(&s, TSC_META_DROPPED_WRITE), "0");
    assert_non_null(dump_scan_meta(&s, TSC_META_HOST));
    assert_non_null(strstr(dump_scan_meta(&s, TSC_META_CMDLINE), "basic"));
    assert_non_null(dump_scan_meta(&s, TSC_META_START_REALTIME));
    assert_non_null(dump_scan_meta(&s, TSC_META_ANCHOR_MONOTONIC));

    const scan_event *ev[64];
    size_t n = nccl_events(&s, ev, 64);
    assert_int_equal(n, 25);
    static const struct {
        uint8_t op;
        uint64_t val;
        uint8_t flags;
        uint8_t result;
    } want[25] = {
        {TSC_NCCL_COMM_INIT_RANK, 0, 0, 0},
        {TSC_NCCL_ALLREDUCE, 0, 0, 0}, {TSC_NCCL_ALLREDUCE, 1, 0, 0},
        {TSC_NCCL_ALLREDUCE, 2, 0, 0}, {TSC_NCCL_ALLREDUCE, 3, 0, 0},
        {TSC_NCCL_ALLREDUCE, 4, 0, 0}, {TSC_NCCL_ALLREDUCE, 5, 0, 0},
        {TSC_NCCL_ALLREDUCE, 6, 0, 0}, {TSC_NCCL_ALLREDUCE, 7, 0, 0},
        {TSC_NCCL_ALLREDUCE, 8, 0, 0}, {TSC_NCCL_ALLREDUCE, 9, 0, 0},
        {TSC_NCCL_ALLGATHER, 10, 0, 0}, {TSC_NCCL_BROADCAST, 11, 0, 0},
        {TSC_NCCL_GROUP_START, 0, 0, 0},
        {TSC_NCCL_SEND, 12, TSC_NCCL_F_IN_GROUP, 0}, {TSC_NCCL_RECV, 13, TSC_NCCL_F_IN_GROUP, 0},
        {TSC_NCCL_GROUP_END, 0, TSC_NCCL_F_IN_GROUP, 0},
        {TSC_NCCL_COMM_SPLIT, 0, 0, 0},
        {TSC_NCCL_ALLREDUCE, 0, 0, 0}, {TSC_NCCL_ALLREDUCE, 1, 0, 0},
        {TSC_NCCL_ALLREDUCE, 2, 0, 0},
        {TSC_NCCL_ALLREDUCE, 14, 0, 0}, {TSC_NCCL_ALLREDUCE, 15, 0, tsc_ncclInvalidArgument},
        {TSC_NCCL_COMM_DESTROY, 0, 0, 0}, {TSC_NCCL_COMM_DESTROY, 0, 0, 0},
    };
    uint64_t wid = world_id();
    uint64_t half_id = tsc_comm_id_split(wid, 0, 1);
    uint32_t ncall_descs = 0;
    for (size_t i = 0; i < s.ndescs; i++)
        ncall_descs += s.descs[i].type == TSC_DESC_NCCL_CALL;
    for (size_t i = 0; i < n; i++) {
        const tsc_desc_nccl_call *d = call_of(&s, ev[i]);
        assert_int_equal(d->op, want[i].op);
        assert_int_equal(ev[i]->ev.val, want[i].val);
        assert_int_equal(ev[i]->ev.flags, want[i].flags);
        assert_int_equal(ev[i]->ev.aux >> 8, want[i].result);
        assert_true(ev[i]->ev.start_ns <= ev[i]->ev.end_ns);
        assert_true(ev[i]->ev.start_ns > 1600000000000000000ull);
        if (i > 0)
            assert_true(ev[i - 1]->ev.start_ns <= ev[i]->ev.start_ns);
    }
    /* Every call returned: none was in flight when the dump was written,
     * so there is no ENTER record (its own record proves it was entered). */
    for (size_t k = 0; k < s.nevents; k++)
        assert_int_not_equal(s.events[k].ev.kind, TSC_EV_NCCL_ENTER);

    /* Group depth at entry: 1 inside the group (GroupEnd included). */
    assert_int_equal(ev[14]->ev.aux & 0xff, 1);
    assert_int_equal(ev[16]->ev.aux & 0xff, 1);
    assert_int_equal(ev[13]->ev.aux & 0xff, 0);

    const tsc_desc_nccl_call *init = call_of(&s, ev[0]);
    assert_true(init->comm_id == wid);
    assert_int_equal(init->comm_rank, 1);
    assert_int_equal(init->comm_size, 4);
    const tsc_desc_nccl_call *ar = call_of(&s, ev[1]);
    assert_int_equal(ar->dtype, TSC_DT_FLOAT32);
    assert_int_equal(ar->redop, 0);
    assert_int_equal(ar->count, 256);
    assert_int_equal(ar->bytes, 1024);
    assert_int_equal(ar->peer, TSC_NO_PEER);
    assert_true(ar->comm_id == wid);
    assert_int_equal(ar->comm_rank, 1);
    assert_int_equal(ar->comm_size, 4);
    const tsc_desc_nccl_call *ag = call_of(&s, ev[11]);
    assert_int_equal(ag->dtype, TSC_DT_BFLOAT16);
    assert_int_equal(ag->bytes, 200);
    assert_int_equal(ag->redop, TSC_REDOP_NONE);
    assert_int_equal(call_of(&s, ev[12])->peer, 0);         /* broadcast root */
    assert_int_equal(call_of(&s, ev[14])->peer, 2);         /* send to rank 2 */
    assert_int_equal(call_of(&s, ev[15])->peer, 0);         /* recv from rank 0 */
    const tsc_desc_nccl_call *split = call_of(&s, ev[17]);
    assert_true(split->parent_comm_id == wid);
    assert_int_equal(split->color, 1);
    assert_true(split->comm_id == half_id);
    assert_int_equal(split->comm_rank, 0); /* stub: rank / 2 */
    assert_int_equal(split->comm_size, 2);
    assert_true(call_of(&s, ev[18])->comm_id == half_id);
    /* Interning: the 10 world all-reduces use two signatures. */
    assert_int_equal(ev[1]->ev.desc, ev[3]->ev.desc);
    assert_int_equal(ev[2]->ev.desc, ev[4]->ev.desc);
    assert_true(ev[1]->ev.desc != ev[2]->ev.desc);
    assert_true(ncall_descs < 25);

    /* The thread is named before its events, under its comm name. */
    int named = 0;
    for (size_t i = 0; i < s.ndescs; i++) {
        if (s.descs[i].type != TSC_DESC_THREAD)
            continue;
        tsc_desc_thread t;
        memcpy(&t, s.descs[i].payload, sizeof t);
        assert_int_equal(t.tid, ev[0]->tid);
        assert_int_equal(t.name_len, strlen("nccl_driver"));
        assert_memory_equal(s.descs[i].payload + 8, "nccl_driver", t.name_len);
        named++;
    }
    assert_int_equal(named, 1);
    dump_scan_free(&s);
}

/* The thread's call cache keys on the communicator's address: a new
 * communicator at a destroyed one's address must not inherit its
 * descriptor. */
static void test_new_comm_at_old_address(void **state)
{
    (void)state;
    int st = run_driver("comm-reuse", NULL);
    assert_true(WIFEXITED(st));
    if (WEXITSTATUS(st) == 6)
        skip(); /* the allocator gave another address: nothing to check */
    assert_int_equal(WEXITSTATUS(st), 0);
    static dump_scan s;
    load_only_dump(&s);
    const scan_event *ev[16];
    size_t n = nccl_events(&s, ev, 16);
    assert_int_equal(n, 10); /* init, 3 all-reduces, destroy; twice */
    for (int k = 0; k < 2; k++) {
        const tsc_desc_nccl_call *init = call_of(&s, ev[5 * k]);
        assert_int_equal(init->op, TSC_NCCL_COMM_INIT_RANK);
        assert_int_equal(init->comm_rank, k);
        for (int i = 1; i <= 3; i++) {
            const tsc_desc_nccl_call *ar = call_of(&s, ev[5 * k + i]);
            assert_int_equal(ar->op, TSC_NCCL_ALLREDUCE);
            assert_true(ar->comm_id == init->comm_id);
            assert_int_equal(ar->comm_rank, k);
            assert_int_equal(ev[5 * k + i]->ev.val, (uint64_t)(i - 1)); /* its own sequence */
        }
    }
    assert_true(call_of(&s, ev[0])->comm_id != call_of(&s, ev[5])->comm_id);
    dump_scan_free(&s);
}

static void test_ranks_agree_on_comm_ids(void **state)
{
    (void)state;
    uint64_t ids[3][2];
    const char *ranks[3] = {"0", "2", "1"};
    for (int r = 0; r < 3; r++) {
        const char *env[] = {"RANK", ranks[r], NULL};
        int st = run_driver("basic", env);
        assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
        static dump_scan s;
        load_only_dump(&s);
        const scan_event *ev[64];
        assert_int_equal(nccl_events(&s, ev, 64), 25);
        ids[r][0] = call_of(&s, ev[1])->comm_id;
        ids[r][1] = call_of(&s, ev[18])->comm_id;
        dump_scan_free(&s);
    }
    assert_true(ids[0][0] == ids[1][0] && ids[1][0] == ids[2][0]); /* world */
    assert_true(ids[0][1] == ids[1][1]);                           /* color 0 */
    assert_true(ids[0][1] != ids[2][1]);                           /* color 1 */
}

static void test_threads_get_contiguous_sequence(void **state)
{
    (void)state;
    int st = run_driver("threads", NULL);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    static dump_scan s;
    load_only_dump(&s);
    static unsigned char seen[2000];
    memset(seen, 0, sizeof seen);
    size_t all = 0;
    uint32_t tids[8];
    size_t ntids = 0;
    for (size_t i = 0; i < s.nevents; i++) {
        const scan_event *e = &s.events[i];
        if (e->ev.kind != TSC_EV_NCCL || call_of(&s, e)->op != TSC_NCCL_ALLREDUCE)
            continue;
        assert_true(e->ev.val < 2000);
        assert_int_equal(seen[e->ev.val], 0);
        seen[e->ev.val] = 1;
        all++;
        size_t k;
        for (k = 0; k < ntids && tids[k] != e->tid; k++)
            ;
        if (k == ntids && ntids < 8)
            tids[ntids++] = e->tid;
    }
    assert_int_equal(all, 2000);
    assert_int_equal(ntids, 4);
    assert_string_equal(dump_scan_meta(&s, TSC_META_DROPPED), "0");
    dump_scan_free(&s);
}

static void test_thread_limit_drops_and_counts(void **state)
{
    (void)state;
    static const char *const env[] = {"TSCOPE_MAX_THREADS", "1", NULL};
    int st = run_driver("threads", env);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    static dump_scan s;
    load_only_dump(&s);
    /* Only the main thread (the init call) got a buffer. */
    assert_string_equal(dump_scan_meta(&s, TSC_META_EVENTS), "1");
    assert_string_equal(dump_scan_meta(&s, TSC_META_DROPPED), "2000");
    assert_non_null(strstr(errbuf, "tscope: more than TSCOPE_MAX_THREADS=1"));
    dump_scan_free(&s);
}

/* The dump's "events" count: the NCCL calls that returned plus the ENTER
 * markers of calls a drain found in flight (a drain can catch a thread
 * inside a call; each such call is then on disk twice, marker and record).
 * Returns the calls that returned. */
static uint64_t returned_calls_match_count(const dump_scan *s)
{
    uint64_t returned = 0, entered = 0;
    for (size_t i = 0; i < s->nevents; i++) {
        returned += s->events[i].ev.kind == TSC_EV_NCCL;
        entered += s->events[i].ev.kind == TSC_EV_NCCL_ENTER;
    }
    assert_int_equal(strtoull(dump_scan_meta(s, TSC_META_EVENTS), NULL, 10), returned + entered);
    return returned;
}

static void test_ended_threads_give_their_slot_back(void **state)
{
    (void)state;
    static const char *const env[] = {"TSCOPE_MAX_THREADS", "2", "TSCOPE_FLUSH_MS", "20",
                                      NULL};
    int st = run_driver("churn", env);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    static dump_scan s;
    load_only_dump(&s);
    assert_int_equal(returned_calls_match_count(&s), 201);
    assert_string_equal(dump_scan_meta(&s, TSC_META_DROPPED), "0");
    /* 21 threads named, each with its own tid, events under their tids. */
    uint32_t tids[32];
    size_t ntids = 0;
    for (size_t i = 0; i < s.ndescs; i++) {
        if (s.descs[i].type != TSC_DESC_THREAD)
            continue;
        tsc_desc_thread t;
        memcpy(&t, s.descs[i].payload, sizeof t);
        assert_int_equal(t.tid, s.descs[i].tid); /* defined in its own stream */
        for (size_t k = 0; k < ntids; k++)
            assert_true(tids[k] != t.tid);
        assert_true(ntids < 32);
        tids[ntids++] = t.tid;
    }
    assert_int_equal(ntids, 21);
    for (size_t i = 0; i < s.nevents; i++) {
        size_t k;
        for (k = 0; k < ntids && tids[k] != s.events[i].tid; k++)
            ;
        assert_true(k < ntids);
    }
    assert_string_equal(errbuf, "");
    dump_scan_free(&s);
}

static void test_small_buffers_lose_nothing_silently(void **state)
{
    (void)state;
    /* 256-slot rings and no periodic flush: only the half-full wake-ups
     * can drain the rings while the threads run, and whatever does not fit
     * is counted, never lost silently. */
    static const char *const env[] = {"TSCOPE_BUFFER_KB", "8", "TSCOPE_FLUSH_MS", "3600000",
                                      NULL};
    int st = run_driver("threads-paced", env);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    static dump_scan s;
    load_only_dump(&s);
    uint64_t returned = returned_calls_match_count(&s);
    uint64_t dropped = strtoull(dump_scan_meta(&s, TSC_META_DROPPED), NULL, 10);
    /* A desc that did not fit drops its event too, so each call is either
     * recorded or counted (a dropped desc may count once more). */
    assert_true(returned + dropped >= 2001);
    /* Without mid-run drains at most 4 x 256 slots could reach the file. */
    assert_true(returned > 4 * 256 + 1);
    dump_scan_free(&s);
}

static void test_sigterm_default_flushes_then_dies(void **state)
{
    (void)state;
    int st = run_driver("sigterm", NULL);
    assert_true(WIFSIGNALED(st));
    assert_int_equal(WTERMSIG(st), SIGTERM);
    static dump_scan s;
    load_only_dump(&s);
    assert_int_equal(s.end_chunks, 1);
    assert_string_equal(dump_scan_meta(&s, TSC_META_END_REASON), "signal:15");
    assert_string_equal(dump_scan_meta(&s, TSC_META_EVENTS), "6");
    dump_scan_free(&s);
}

static void test_sigterm_app_handler_still_runs(void **state)
{
    (void)state;
    int st = run_driver("sigterm-handler", NULL);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 3);
    static dump_scan s;
    load_only_dump(&s);
    assert_int_equal(s.end_chunks, 2); /* signal:15, then the real exit */
    assert_string_equal(dump_scan_meta(&s, TSC_META_END_REASON), "exit");
    assert_string_equal(dump_scan_meta(&s, TSC_META_EVENTS), "8");
    assert_string_equal(dump_scan_meta(&s, TSC_META_EXIT_CODE), "3");
    dump_scan_free(&s);
}

/* A vfork child resetting its handlers (Python's subprocess) must not
 * reset the recording parent's. */
static void test_vfork_child_leaves_parent_handler(void **state)
{
    (void)state;
    int st = run_driver("sigterm-vfork", NULL);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 5);
}

static void test_handlers_installed_before_setup_are_kept(void **state)
{
    (void)state;
    int st = run_driver("sigterm-early", NULL);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 4);
    static dump_scan s;
    load_only_dump(&s);
    /* The ignored SIGINT left no trace; SIGTERM did, then the exit. */
    assert_int_equal(s.end_chunks, 2);
    int ends = 0;
    for (size_t c = 0; c < s.nchunks; c++) {
        if (s.chunks[c].type != TSC_CHUNK_END)
            continue;
        const char *p = (const char *)s.data + s.chunk_off[c] + 32;
        assert_string_equal(p, TSC_META_END_REASON);
        assert_string_equal(p + strlen(p) + 1, ends++ == 0 ? "signal:15" : "exit");
    }
    dump_scan_free(&s);
}

static void test_fork_child_writes_nothing_of_parent(void **state)
{
    (void)state;
    int st = run_driver("fork", NULL);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    static dump_scan s;
    load_only_dump(&s); /* exactly one file: the parent's */
    assert_string_equal(dump_scan_meta(&s, TSC_META_EVENTS), "6");
    dump_scan_free(&s);
}

static void test_fork_child_that_records_gets_own_file(void **state)
{
    (void)state;
    int st = run_driver("fork-record", NULL);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    assert_int_equal(dump_scan_count_files(outdir, NULL, 0), 2);
    /* Find the child's file: the one whose pid is not the ppid of the
     * other... simpler: the one with 2 events. */
    char cmd[700];
    snprintf(cmd, sizeof cmd, "ls %s", outdir);
    FILE *ls = popen(cmd, "r");
    char name[256];
    int child_files = 0, parent_files = 0;
    char parent_pid[32] = "";
    while (fgets(name, sizeof name, ls)) {
        name[strcspn(name, "\n")] = '\0';
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", outdir, name);
        static dump_scan s;
        assert_int_equal(dump_scan_load(&s, path), 0);
        assert_int_equal(s.bad_crc, 0);
        const char *events = dump_scan_meta(&s, TSC_META_EVENTS);
        if (!strcmp(events, "2")) {
            child_files++;
            /* Nothing of the parent: no init call in the child's file. */
            for (size_t i = 0; i < s.nevents; i++)
                assert_int_equal(call_of(&s, &s.events[i])->op, TSC_NCCL_ALLREDUCE);
            assert_true(strcmp(dump_scan_meta(&s, TSC_META_PPID), "0") != 0);
        } else {
            assert_string_equal(events, "6");
            parent_files++;
            snprintf(parent_pid, sizeof parent_pid, "%s", dump_scan_meta(&s, TSC_META_PID));
        }
        dump_scan_free(&s);
    }
    pclose(ls);
    assert_int_equal(child_files, 1);
    assert_int_equal(parent_files, 1);
    assert_true(parent_pid[0] != '\0');
}

static void test_init_all_comms(void **state)
{
    (void)state;
    int st = run_driver("init-all", NULL);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    static dump_scan s;
    load_only_dump(&s);
    const scan_event *ev[16];
    assert_int_equal(nccl_events(&s, ev, 16), 7);
    const tsc_desc_nccl_call *init = call_of(&s, ev[0]);
    assert_int_equal(init->op, TSC_NCCL_COMM_INIT_ALL);
    assert_int_equal(init->comm_size, 3);
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 2; j++) {
            const scan_event *e = ev[1 + 2 * i + j];
            const tsc_desc_nccl_call *d = call_of(&s, e);
            assert_true(d->comm_id == init->comm_id);
            assert_int_equal(d->comm_rank, i);
            assert_int_equal(e->ev.val, j); /* per-communicator sequence */
        }
    }
    dump_scan_free(&s);
}

static void test_disabled_and_non_nccl_write_nothing(void **state)
{
    (void)state;
    static const char *const off[] = {"TSCOPE_DISABLE", "1", NULL};
    int st = run_driver("basic", off);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    assert_int_equal(dump_scan_count_files(outdir, NULL, 0), 0);
    st = run_driver("no-nccl", NULL);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    assert_int_equal(access(outdir, F_OK), -1); /* not even the folder */
    assert_string_equal(errbuf, "");
}

static void test_unwritable_output_one_line_and_job_goes_on(void **state)
{
    (void)state;
    static const char *const env[] = {"TSCOPE_OUT", "/proc/tscope-cannot-write-here", NULL};
    int st = run_driver("exit-code", env);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 42);
    assert_int_equal(strncmp(errbuf, "tscope: ", 8), 0);
    char *nl = strchr(errbuf, '\n');
    assert_non_null(nl);
    assert_string_equal(nl + 1, ""); /* exactly one line */
}

static void test_write_errors_one_line_file_stays_readable(void **state)
{
    (void)state;
    int st = run_driver("fsize", NULL);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    assert_int_equal(strncmp(errbuf, "tscope: cannot write ", 21), 0);
    assert_null(strchr(strchr(errbuf, '\n') + 1, '\n')); /* one line */
    static dump_scan s;
    load_only_dump(&s); /* no torn chunk: CRCs and layout all valid */
    assert_true(s.size <= 4096);
    assert_true(s.nchunks >= 1);
    dump_scan_free(&s);
}

static void test_no_nccl_loaded_answers_system_error(void **state)
{
    (void)state;
    program = getenv("TSC_NO_NCCL_CALLER");
    assert_non_null(program);
    int st = run_driver("", NULL);
    program = NULL;
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    assert_int_equal(strncmp(errbuf, "tscope: ncclAllReduce called but no NCCL", 40), 0);
    assert_null(strchr(strchr(errbuf, '\n') + 1, '\n')); /* warned once */
}

static void test_garbage_config_warns_once_per_variable(void **state)
{
    (void)state;
    static const char *const env[] = {"TSCOPE_FLUSH_MS", "soon", NULL};
    int st = run_driver("exit-code", env);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 42);
    assert_non_null(strstr(errbuf, "tscope: ignoring TSCOPE_FLUSH_MS='soon'"));
    assert_null(strchr(strchr(errbuf, '\n') + 1, '\n'));
    static const char *const quiet[] = {"TSCOPE_FLUSH_MS", "soon", "TSCOPE_QUIET", "1", NULL};
    st = run_driver("exit-code", quiet);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 42);
    assert_string_equal(errbuf, "");
}

/* Issue 13 item 13: a process that never records (a job script's shell,
 * its helpers) prints no config warning, and of the job's recording
 * processes (same output directory and run id) only the first does. */
static void test_config_warning_once_per_job(void **state)
{
    (void)state;
    char shared[600];
    snprintf(shared, sizeof shared, "%s/one-job", getenv("TSC_TEST_TMP"));
    const char *const env[] = {"TSCOPE_FLUSH_MS", "soon", "TSCOPE_OUT", shared, NULL};
    int st = run_driver("no-nccl", env);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    assert_string_equal(errbuf, "");
    size_t warned = 0;
    for (int i = 0; i < 3; i++) {
        st = run_driver("exit-code", env);
        assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 42);
        warned += strstr(errbuf, "tscope: ignoring TSCOPE_FLUSH_MS='soon'") != NULL;
        if (i == 0)
            assert_non_null(strstr(errbuf, "tscope: ignoring TSCOPE_FLUSH_MS='soon'"));
    }
    assert_int_equal(warned, 1);
    assert_int_equal(dump_scan_count_files(shared, NULL, 0), 3);   /* all three recorded */
}

static void test_exec_flushes_first(void **state)
{
    (void)state;
    int st = run_driver("exec", NULL);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0); /* /bin/true's status */
    static dump_scan s;
    load_only_dump(&s);
    assert_int_equal(s.end_chunks, 1);
    assert_string_equal(dump_scan_meta(&s, TSC_META_END_REASON), "exec");
    assert_string_equal(dump_scan_meta(&s, TSC_META_EVENTS), "4");
    dump_scan_free(&s);
}

/* Every exec variant and _exit/_Exit: the 3 AllReduce and the init are on
 * disk, with the END the process could write. */
static void test_every_exec_variant_and_exit_flush(void **state)
{
    (void)state;
    static const struct {
        const char *mode, *reason;
        int status;
    } cases[] = {
        {"exec-execl", "exec", 0},   {"exec-execlp", "exec", 0}, {"exec-execle", "exec", 0},
        {"exec-execvpe", "exec", 0}, {"exec-fexecve", "exec", 0}, {"exec-_exit", "exit", 7},
        {"exec-_Exit", "exit", 8},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int st = run_driver(cases[i].mode, NULL);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != cases[i].status)
            fail_msg("%s: status 0x%x, want exit %d", cases[i].mode, st, cases[i].status);
        static dump_scan s;
        load_only_dump(&s);
        assert_int_equal(s.end_chunks, 1);
        assert_string_equal(dump_scan_meta(&s, TSC_META_END_REASON), cases[i].reason);
        assert_string_equal(dump_scan_meta(&s, TSC_META_EVENTS), "4");
        if (cases[i].status) {
            char code[8];
            snprintf(code, sizeof code, "%d", cases[i].status);
            assert_string_equal(dump_scan_meta(&s, TSC_META_EXIT_CODE), code);
        }
        dump_scan_free(&s);
    }
}

/* SIGABRT (abort()), SIGSEGV (a real fault) and SIGBUS: the events before
 * the signal are on disk with END "signal:N", and the process still dies
 * by that signal, as it would without the preload. */
static void test_fatal_signals_flush_then_die_the_same(void **state)
{
    (void)state;
    static const struct {
        const char *mode;
        int sig;
    } cases[] = {{"crash-abort", SIGABRT}, {"crash-segv", SIGSEGV}, {"crash-bus", SIGBUS}};
    /* Under ASan its own SEGV/BUS handler would turn the crash into exit 1. */
    static const char *const env[] = {
        "ASAN_OPTIONS", "verify_asan_link_order=0:detect_leaks=0:handle_segv=0:handle_sigbus=0:"
                        "handle_abort=0", NULL};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int st = run_driver(cases[i].mode, env);
        if (!WIFSIGNALED(st) || WTERMSIG(st) != cases[i].sig)
            fail_msg("%s: status 0x%x, want killed by signal %d", cases[i].mode, st,
                     cases[i].sig);
        static dump_scan s;
        load_only_dump(&s);
        char want[16];
        snprintf(want, sizeof want, "signal:%d", cases[i].sig);
        assert_int_equal(s.end_chunks, 1);
        assert_string_equal(dump_scan_meta(&s, TSC_META_END_REASON), want);
        assert_string_equal(dump_scan_meta(&s, TSC_META_EVENTS), "4");
        dump_scan_free(&s);
    }
}

static void test_thread_renamed_later_is_named_again(void **state)
{
    (void)state;
    static const char *const env[] = {"TSCOPE_FLUSH_MS", "20", NULL};
    int st = run_driver("rename", env);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    static dump_scan s;
    load_only_dump(&s);
    /* Main thread once; the worker under its first name, then again. */
    const char *names[4];
    size_t n = 0;
    uint32_t worker = 0;
    for (size_t i = 0; i < s.ndescs && n < 4; i++) {
        if (s.descs[i].type != TSC_DESC_THREAD)
            continue;
        tsc_desc_thread t;
        memcpy(&t, s.descs[i].payload, sizeof t);
        static char buf[4][32];
        snprintf(buf[n], sizeof buf[n], "%.*s", (int)t.name_len,
                 (const char *)s.descs[i].payload + 8);
        if (!strcmp(buf[n], "pt_autograd_0"))
            worker = t.tid;
        names[n] = buf[n];
        n++;
    }
    assert_int_equal(n, 3);
    assert_string_equal(names[0], "nccl_driver");
    assert_string_equal(names[1], "nccl_driver"); /* inherited at creation */
    assert_string_equal(names[2], "pt_autograd_0");
    /* The rename is attributed to the worker's own chunk stream. */
    int worker_events = 0;
    for (size_t i = 0; i < s.nevents; i++)
        worker_events += s.events[i].tid == worker;
    assert_int_equal(worker_events, 2);
    dump_scan_free(&s);
}

int main(void)
{
    driver = getenv("TSC_DRIVER");
    preload = getenv("TSC_PRELOAD");
    if (!driver || !preload) {
        fprintf(stderr, "set TSC_DRIVER and TSC_PRELOAD\n");
        return 1;
    }
    char tmpl[] = "/tmp/tsc_preload_XXXXXX";
    if (!mkdtemp(tmpl))
        return 1;
    setenv("TSC_TEST_TMP", tmpl, 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_basic_run),
        cmocka_unit_test(test_new_comm_at_old_address),
        cmocka_unit_test(test_ranks_agree_on_comm_ids),
        cmocka_unit_test(test_threads_get_contiguous_sequence),
        cmocka_unit_test(test_thread_limit_drops_and_counts),
        cmocka_unit_test(test_ended_threads_give_their_slot_back),
        cmocka_unit_test(test_small_buffers_lose_nothing_silently),
        cmocka_unit_test(test_sigterm_default_flushes_then_dies),
        cmocka_unit_test(test_sigterm_app_handler_still_runs),
        cmocka_unit_test(test_vfork_child_leaves_parent_handler),
        cmocka_unit_test(test_handlers_installed_before_setup_are_kept),
        cmocka_unit_test(test_fork_child_writes_nothing_of_parent),
        cmocka_unit_test(test_fork_child_that_records_gets_own_file),
        cmocka_unit_test(test_init_all_comms),
        cmocka_unit_test(test_exec_flushes_first),
        cmocka_unit_test(test_every_exec_variant_and_exit_flush),
        cmocka_unit_test(test_fatal_signals_flush_then_die_the_same),
        cmocka_unit_test(test_thread_renamed_later_is_named_again),
        cmocka_unit_test(test_disabled_and_non_nccl_write_nothing),
        cmocka_unit_test(test_unwritable_output_one_line_and_job_goes_on),
        cmocka_unit_test(test_write_errors_one_line_file_stays_readable),
        cmocka_unit_test(test_no_nccl_loaded_answers_system_error),
        cmocka_unit_test(test_garbage_config_warns_once_per_variable),
        cmocka_unit_test(test_config_warning_once_per_job),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpl);
    if (system(cmd) != 0)
        rc = rc ? rc : 1;
    return rc;
}
