/* `tscope-report live DIR`: the job-level series of a running black-box
 * job (passes/bb_live.h), from the ranks' summary files as they grow,
 * written as a Prometheus textfile (atomically: a temporary file renamed)
 * every period and/or served on http://ADDR:PORT/metrics; --once reads
 * what is there, writes once and exits (docs/blackbox.md). */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli_number.h"
#include "commands.h"
#include "live_http.h"
#include "load/bb_follow.h"
#include "passes/bb_live.h"
#include "report/live_prom.h"

#define RANK_MAP_MAX (1 << 20) /* ranks below this are looked up directly */

typedef struct live_cmd {
    const char *dir, *out, *addr;
    long port;
    double period_s;
    int once;
    tsa_live_opts opt;
    tsa_live live;
    tsa_bb_follow follow;
    long *rank_map;        /* rank -> index + 1 in live (0: not yet) */
    size_t rank_map_n;
    char job[256];
    int world_size;
} live_cmd;

static volatile sig_atomic_t g_stop;

static void on_stop(int sig)
{
    (void)sig;
    g_stop = 1;
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: tscope-report live DIR [--once] [-o FILE] [--port P [--addr A]]\n"
            "                          [--period S] [--window N] [--z Z] [--min-slowdown X]\n"
            "  DIR: TSCOPE_OUT of a running job in black-box mode (TSCOPE_MODE=blackbox)\n"
            "  job-level series from the ranks' step summaries, in Prometheus text format:\n"
            "  -o FILE         rewrite FILE every period (a temporary file, then rename)\n"
            "  --port P        serve them on http://127.0.0.1:P/metrics\n"
            "  --addr A        bind address A instead (an explicit choice)\n"
            "  --once          read what is there, write once (FILE or stdout), exit\n"
            "  --period S      seconds between reads (default 5)\n"
            "  --window N      complete steps in the straggler window (default 100)\n"
            "  --z Z           binomial z-score that names a straggler (default 3)\n"
            "  --min-slowdown X  and how much slower it must be (default 0.03)\n");
}

static int parse(live_cmd *c, int argc, char **argv)
{
    tsa_live_default_opts(&c->opt);
    c->addr = "127.0.0.1";
    c->period_s = 5;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        long n;
        double d;
        if (!strcmp(a, "--once")) {
            c->once = 1;
            continue;
        }
        if (a[0] != '-') {
            if (c->dir)
                return -1;
            c->dir = a;
            continue;
        }
        if (!v)
            return -1;
        i++;
        if (!strcmp(a, "-o"))
            c->out = v;
        else if (!strcmp(a, "--addr"))
            c->addr = v;
        else if (!strcmp(a, "--port") && tsa_cli_long(v, 1, 65535, &n) == 0)
            c->port = n;
        else if (!strcmp(a, "--period") && tsa_cli_double(v, &d) == 0 && d >= 0.05 && d <= 3600)
            c->period_s = d;
        else if (!strcmp(a, "--window") && tsa_cli_long(v, 1, 1000000, &n) == 0)
            c->opt.window = (uint32_t)n;
        else if (!strcmp(a, "--z") && tsa_cli_double(v, &d) == 0 && d > 0 && d < 1000)
            c->opt.z_threshold = d;
        else if (!strcmp(a, "--min-slowdown") && tsa_cli_double(v, &d) == 0 && d >= 0 && d < 1000)
            c->opt.min_slowdown = d;
        else
            return -1;
    }
    return c->dir && (c->once || c->out || c->port) ? 0 : -1;
}

/* The live index of src's rank. */
static long index_of(live_cmd *c, int rank)
{
    if (rank < 0 || rank >= RANK_MAP_MAX)
        return tsa_live_rank_index(&c->live, rank);
    if ((size_t)rank >= c->rank_map_n) {
        size_t n = (size_t)rank + 1 > c->rank_map_n * 2 ? (size_t)rank + 1 : c->rank_map_n * 2;
        long *m = realloc(c->rank_map, n * sizeof *m);
        if (!m)
            return -1;
        memset(m + c->rank_map_n, 0, (n - c->rank_map_n) * sizeof *m);
        c->rank_map = m;
        c->rank_map_n = n;
    }
    if (!c->rank_map[rank])
        c->rank_map[rank] = tsa_live_rank_index(&c->live, rank) + 1;
    return c->rank_map[rank] - 1;
}

static void on_steps(void *ctx, const tsa_bb_source *src, const tsc_step_summary *s,
                     const tsc_step_extra *x, size_t n)
{
    live_cmd *c = ctx;
    long i = index_of(c, src->rank);
    if (i >= 0)
        tsa_live_add(&c->live, (size_t)i, s, x, n);
    if (!c->job[0] && src->run_id[0])
        snprintf(c->job, sizeof c->job, "%s", src->run_id);
    if (c->world_size < 0 && src->world_size > 0)
        c->world_size = src->world_size;
    c->live.expected = c->world_size > 0 ? (size_t)c->world_size : 0;
}

static void on_reset(void *ctx)
{
    live_cmd *c = ctx;
    tsa_live_reset(&c->live);
    if (c->rank_map)
        memset(c->rank_map, 0, c->rank_map_n * sizeof *c->rank_map);
    c->job[0] = 0;
    c->world_size = -1;
}

/* Read what the ranks appended, then the series as text (caller frees).
 * *unreadable: the folder cannot be listed (said; a job may create it
 * later). */
static char *refresh(live_cmd *c, size_t *len, int *unreadable)
{
    char err[512];
    *unreadable = tsa_bb_follow_poll(&c->follow, on_steps, on_reset, c, err, sizeof err) < 0;
    if (*unreadable)
        fprintf(stderr, "tscope-report: %s\n", err);
    tsa_live_update(&c->live);
    char *text = NULL;
    FILE *m = open_memstream(&text, len);
    if (!m)
        return NULL;
    tsa_live_write_prom(m, &c->live, c->job, c->world_size);
    tsa_live_write_self_cost(m, &c->follow, c->job);
    if (fclose(m) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

/* FILE written whole, then renamed over the old one: a reader (node
 * exporter's textfile collector) never sees half of it. */
static int write_file(const char *path, const char *text, size_t len)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.%d.tmp", path, (int)getpid());
    FILE *f = fopen(tmp, "we");
    int ok = f && fwrite(text, 1, len, f) == len;
    if (f && fclose(f) != 0)
        ok = 0;
    if (ok && rename(tmp, path) == 0)
        return 0;
    fprintf(stderr, "tscope-report: cannot write %s: %s\n", path, strerror(errno));
    unlink(tmp);
    return -1;
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Serve scrapes of text until the next period (or a stop signal). */
static void wait_period(live_cmd *c, int fd, const char *text, size_t len)
{
    double until = mono_s() + c->period_s;
    while (!g_stop) {
        double left = until - mono_s();
        if (left <= 0)
            return;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int ms = (int)(left * 1000) + 1;
        if (fd < 0) {
            struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
            nanosleep(&ts, NULL);
        } else if (poll(&p, 1, ms) > 0 && (p.revents & POLLIN)) {
            tsa_http_answer(fd, text, len);
        }
    }
}

static int run(live_cmd *c)
{
    int fd = -1;
    if (c->port && !c->once) {
        char err[512];
        fd = tsa_http_listen(c->addr, (unsigned)c->port, err, sizeof err);
        if (fd < 0) {
            fprintf(stderr, "tscope-report: %s\n", err);
            return 2;
        }
    }
    struct sigaction sa = {.sa_handler = on_stop};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    int rc = 0;
    while (!g_stop) {
        size_t len = 0;
        int unreadable;
        char *text = refresh(c, &len, &unreadable);
        if (text && unreadable && c->once) {
            free(text);
            rc = 2;
            break;
        }
        if (!text) {
            fprintf(stderr, "tscope-report: out of memory\n");
            rc = 2;
            break;
        }
        if (c->out && write_file(c->out, text, len) < 0)
            rc = 1;
        else if (c->once && !c->out)
            fwrite(text, 1, len, stdout);
        if (c->once) {
            free(text);
            break;
        }
        wait_period(c, fd, text, len);
        free(text);
    }
    if (fd >= 0)
        close(fd);
    return rc ? rc : c->follow.problems ? 1 : 0;
}

int tsa_cmd_live(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        }
    live_cmd c = {.world_size = -1};
    if (parse(&c, argc, argv) < 0) {
        usage(stderr);
        return 2;
    }
    if (tsa_live_init(&c.live, &c.opt) < 0 || tsa_bb_follow_init(&c.follow, c.dir) < 0) {
        fprintf(stderr, "tscope-report: out of memory\n");
        return 2;
    }
    g_stop = 0;
    int rc = run(&c);
    tsa_bb_follow_free(&c.follow);
    tsa_live_free(&c.live);
    free(c.rank_map);
    return rc;
}
