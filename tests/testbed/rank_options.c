/* Command-line and environment parsing for tsc-testbed-rank. */
#include "rank_options.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "64K", "1M", "4096" -> bytes; -1 on garbage. */
static long long parse_size(const char *s)
{
    char *end;
    long long v = strtoll(s, &end, 10);
    if (end == s || v < 0)
        return -1;
    if (*end == 'K' || *end == 'k')
        v <<= 10, end++;
    else if (*end == 'M' || *end == 'm')
        v <<= 20, end++;
    return *end ? -1 : v;
}

/* Whole-string non-negative integer, or -1. */
static long parse_count(const char *s)
{
    char *end;
    long v = strtol(s, &end, 10);
    return end == s || *end || v < 0 ? -1 : v;
}

static int parse_list(const char *s, long long *out, int cap, int sizes)
{
    int n = 0;
    char *copy = strdup(s), *save = NULL;
    if (!copy)
        return -1;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        long long v = sizes ? parse_size(tok) : strtoll(tok, NULL, 10);
        if (n == cap || v < 0) {
            free(copy);
            return -1;
        }
        out[n++] = v;
    }
    free(copy);
    return n;
}

static int set_buckets(tb_options *o, const char *s)
{
    long long v[TB_MAX_BUCKETS];
    int n = parse_list(s, v, TB_MAX_BUCKETS, 1);
    if (n < 0)
        return -1;
    for (int i = 0; i < n; i++)
        o->buckets[i] = (size_t)v[i] & ~(size_t)3; /* whole floats */
    o->nbuckets = n;
    return 0;
}

static int set_slow(tb_options *o, const char *s)
{
    long long v[TB_MAX_SLOW];
    int n = parse_list(s, v, TB_MAX_SLOW, 0);
    if (n < 0)
        return -1;
    for (int i = 0; i < n; i++)
        o->slow_ranks[i] = (int)v[i];
    o->nslow = n;
    return 0;
}

int tb_is_slow(const tb_options *o, int rank, int step)
{
    if (o->slow_from >= 0 && (step < o->slow_from || step > o->slow_to))
        return 0;
    for (int i = 0; i < o->nslow; i++)
        if (o->slow_ranks[i] == rank)
            return 1;
    return 0;
}

enum { O_STEPS = 1, O_COMPUTE, O_SPIN, O_BUCKETS, O_GROUPED, O_FSDP, O_RING, O_BCAST,
       O_NOEXTRAS, O_SLOWR, O_SLOWF, O_SLOWMS, O_THREADS, O_TBYTES, O_FORK, O_MARK,
       O_EXPECT, O_SLOWSTEPS, O_FAIL, O_STOP, O_DESYNC, O_BURN, O_PIN, O_CPUWORK, O_UPSTREAM,
       O_USR2, O_TERMEXIT, O_CPUUS, O_NICE, O_HELP };

static const struct option longopts[] = {
    {"steps", 1, 0, O_STEPS}, {"compute-us", 1, 0, O_COMPUTE}, {"spin", 0, 0, O_SPIN},
    {"buckets", 1, 0, O_BUCKETS}, {"grouped-buckets", 1, 0, O_GROUPED},
    {"fsdp-bytes", 1, 0, O_FSDP}, {"ring-bytes", 1, 0, O_RING},
    {"bcast-bytes", 1, 0, O_BCAST}, {"no-extras", 0, 0, O_NOEXTRAS},
    {"slow-ranks", 1, 0, O_SLOWR}, {"slow-factor", 1, 0, O_SLOWF},
    {"slow-ms", 1, 0, O_SLOWMS}, {"slow-steps", 1, 0, O_SLOWSTEPS}, {"threads", 1, 0, O_THREADS},
    {"thread-bytes", 1, 0, O_TBYTES}, {"fork", 0, 0, O_FORK}, {"mark-after", 1, 0, O_MARK},
    {"expect", 1, 0, O_EXPECT}, {"fail-at", 1, 0, O_FAIL}, {"stop-at", 1, 0, O_STOP},
    {"desync-at", 1, 0, O_DESYNC}, {"burn-threads", 1, 0, O_BURN},
    {"pin-cpu", 1, 0, O_PIN}, {"cpu-work", 0, 0, O_CPUWORK}, {"upstream", 1, 0, O_UPSTREAM},
    {"usr2-count", 0, 0, O_USR2}, {"term-exit", 1, 0, O_TERMEXIT}, {"cpu-us", 1, 0, O_CPUUS},
    {"nice", 1, 0, O_NICE}, {"help", 0, 0, O_HELP},
    {0, 0, 0, 0},
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: tsc-testbed-rank [options]   (one rank; reads RANK, WORLD_SIZE,\n"
            "       LOCAL_RANK, TSC_TESTBED_RDZV from the environment)\n"
            "  --steps N  --compute-us US  --spin | --cpu-work (US of the main thread's\n"
            "      CPU time: contention stretches it)\n"
            "  --cpu-us US (before the compute, US of the main thread's CPU time on every\n"
            "      rank: a mostly sleeping step with a little CPU work)\n"
            "  --buckets 256K,64K,4K  --grouped-buckets N\n"
            "  --fsdp-bytes B  --ring-bytes B  --bcast-bytes B  --no-extras\n"
            "  --slow-ranks 1,3 --slow-factor F | --slow-ms MS  [--slow-steps A-B: only\n"
            "      in steps A to B, a transient slowdown]\n"
            "  --threads N --thread-bytes B  --fork  --mark-after STEPS:FILE\n"
            "  --expect FILE (JSON summary of the NCCL calls made)\n"
            "  --fail-at RANK:STEP[:CODE] (that rank exits with status CODE, default 9,\n"
            "      in that step, after its compute)\n"
            "  --stop-at RANK:STEP (that rank stops calling NCCL there and sleeps: a hang;\n"
            "                      STEP 'init': before it creates its communicator)\n"
            "  --desync-at RANK:STEP (that rank calls AllGather where the others AllReduce)\n"
            "  --burn-threads RANK:N (that rank runs N busy threads)\n"
            "  --pin-cpu RANK:CPU (that rank pins itself to one CPU, like taskset)\n"
            "  --nice RANK:N (that rank lowers its priority to nice N, like nice -n N: a busy\n"
            "      process on its CPU then takes most of it)\n"
            "  --upstream RANK:FROM (that rank receives from FROM in every step before its\n"
            "      compute; FROM sends after its own: RANK waits on its upstream rank)\n"
            "  --usr2-count (count SIGUSR2 in a handler; 'rank R got N SIGUSR2' at the end)\n"
            "  --term-exit CODE (a SIGTERM handler: 'rank R got SIGTERM', then _exit(CODE))\n"
            "Each long option may also come from TSC_TESTBED_<NAME> (e.g. TSC_TESTBED_STEPS=5).\n");
}

/* A byte count in whole floats. */
static int set_size(size_t *dst, const char *arg)
{
    long long v = parse_size(arg);
    if (v < 0)
        return -1;
    *dst = (size_t)v & ~(size_t)3;
    return 0;
}

/* Environment fallbacks are fed through the same switch as argv. */
static int apply(tb_options *o, int id, const char *arg)
{
    switch (id) {
    case O_STEPS: o->steps = (int)parse_count(arg); return o->steps < 0 ? -1 : 0;
    case O_COMPUTE: o->compute_us = parse_count(arg); return o->compute_us < 0 ? -1 : 0;
    case O_SPIN: o->spin = 1; return 0;
    case O_CPUWORK: o->spin = 2; return 0;
    case O_USR2: o->usr2_count = 1; return 0;
    case O_TERMEXIT:
        o->term_exit = (int)parse_count(arg);
        return o->term_exit < 0 || o->term_exit > 255 ? -1 : 0;
    case O_BUCKETS: return set_buckets(o, arg);
    case O_GROUPED:
        o->grouped_buckets = (int)parse_count(arg);
        return o->grouped_buckets < 0 ? -1 : 0;
    case O_FSDP: return set_size(&o->fsdp_bytes, arg);
    case O_RING: return set_size(&o->ring_bytes, arg);
    case O_BCAST: return set_size(&o->bcast_bytes, arg);
    case O_NOEXTRAS: o->extras = 0; return 0;
    case O_SLOWR: return set_slow(o, arg);
    case O_SLOWF: {
        char *end;
        o->slow_factor = strtod(arg, &end);
        return end == arg || *end || !(o->slow_factor > 0) ? -1 : 0;
    }
    case O_SLOWMS: o->slow_ms = parse_count(arg); return o->slow_ms < 0 ? -1 : 0;
    case O_CPUUS: o->cpu_us = parse_count(arg); return o->cpu_us < 0 ? -1 : 0;
    case O_SLOWSTEPS:
        return sscanf(arg, "%d-%d", &o->slow_from, &o->slow_to) != 2 || o->slow_from < 0 ||
                       o->slow_to < o->slow_from
                   ? -1
                   : 0;
    case O_THREADS:
        o->threads = (int)parse_count(arg);
        return o->threads < 0 || o->threads > 64 ? -1 : 0;
    case O_TBYTES: return set_size(&o->thread_bytes, arg);
    case O_FORK: o->fork_child = 1; return 0;
    case O_MARK: {
        char *colon = strchr(arg, ':');
        if (!colon)
            return -1;
        o->mark_after = atoi(arg);
        o->mark_file = colon + 1;
        return 0;
    }
    case O_EXPECT: o->expect_file = arg; return 0;
    case O_FAIL: {
        int n = sscanf(arg, "%d:%d:%d", &o->fail_rank, &o->fail_step, &o->fail_code);
        if (n == 2)
            o->fail_code = 9;
        return n < 2 || o->fail_step < 0 || o->fail_code < 0 || o->fail_code > 255 ? -1 : 0;
    }
    case O_STOP: {
        char when[8] = "";
        if (sscanf(arg, "%d:%7s", &o->stop_rank, when) == 2 && !strcmp(when, "init")) {
            o->stop_step = TB_STOP_AT_INIT;
            return 0;
        }
        return sscanf(arg, "%d:%d", &o->stop_rank, &o->stop_step) != 2 || o->stop_step < 0 ? -1
                                                                                          : 0;
    }
    case O_DESYNC:
        return sscanf(arg, "%d:%d", &o->desync_rank, &o->desync_step) != 2 ||
                       o->desync_step < 0
                   ? -1
                   : 0;
    case O_BURN:
        if (sscanf(arg, "%d:%d", &o->burn_rank, &o->burn_threads) != 2 || o->burn_rank < 0 ||
            o->burn_threads < 0 || o->burn_threads > 16)
            return -1;
        return 0;
    case O_PIN:
        if (sscanf(arg, "%d:%d", &o->pin_rank, &o->pin_cpu) != 2 || o->pin_rank < 0 ||
            o->pin_cpu < 0 || o->pin_cpu >= 1024)
            return -1;
        return 0;
    case O_NICE:
        if (sscanf(arg, "%d:%d", &o->nice_rank, &o->nice) != 2 || o->nice_rank < 0 ||
            o->nice < 0 || o->nice > 19)
            return -1;
        return 0;
    case O_UPSTREAM:
        if (sscanf(arg, "%d:%d", &o->up_rank, &o->up_from) != 2 || o->up_rank < 0 ||
            o->up_from < 0 || o->up_rank == o->up_from)
            return -1;
        return 0;
    default: return -1;
    }
}

static void env_name(const char *opt, char *buf, size_t cap)
{
    size_t n = snprintf(buf, cap, "TSC_TESTBED_");
    for (; *opt && n + 1 < cap; opt++)
        buf[n++] = *opt == '-' ? '_' : (char)(*opt >= 'a' && *opt <= 'z' ? *opt - 32 : *opt);
    buf[n] = 0;
}

int tb_parse_options(tb_options *o, int argc, char **argv)
{
    memset(o, 0, sizeof *o);
    o->steps = 10;
    o->compute_us = 2000;
    set_buckets(o, "256K,64K,16K,4K");
    o->grouped_buckets = 2;
    o->fsdp_bytes = 16384;
    o->ring_bytes = 8192;
    o->bcast_bytes = 4096;
    o->extras = 1;
    o->slow_factor = 1.0;
    o->slow_from = o->slow_to = -1;
    o->thread_bytes = 4096;
    o->fail_rank = -1;
    o->fail_step = -1;
    o->fail_code = 9;
    o->stop_rank = o->stop_step = -1;
    o->desync_rank = o->desync_step = -1;
    o->burn_rank = -1;
    o->pin_rank = -1;
    o->nice_rank = -1;
    o->up_rank = o->up_from = -1;
    o->term_exit = -1;

    char name[64];
    for (const struct option *lo = longopts; lo->name; lo++) {
        if (lo->val == O_HELP)
            continue;
        env_name(lo->name, name, sizeof name);
        const char *v = getenv(name);
        if (v && *v && apply(o, lo->val, v) != 0) {
            fprintf(stderr, "tsc-testbed-rank: bad %s=%s\n", name, v);
            return -1;
        }
    }
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        if (c == O_HELP) {
            usage(stdout);
            exit(0);
        }
        if (c == '?' || apply(o, c, optarg) != 0) {
            if (c != '?')
                fprintf(stderr, "tsc-testbed-rank: bad value for an option: %s\n",
                        optarg ? optarg : "");
            usage(stderr);
            return -1;
        }
    }
    if (optind != argc) {
        fprintf(stderr, "tsc-testbed-rank: unexpected argument %s\n", argv[optind]);
        return -1;
    }
    if (o->grouped_buckets > o->nbuckets)
        o->grouped_buckets = o->nbuckets;
    return 0;
}
