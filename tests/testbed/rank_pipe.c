/* tsc-testbed-rank's pipeline mode (rank_pipe.h says what and how). */
#include "rank_pipe.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rank_tally.h"

typedef struct pipe_cfg {
    int pp, dp, stage, dpr, mb;
    long fwd_us;
    size_t act;
    int slow_rank; double slow_f;
    int slow_stage; double stage_f;
    double jitter; unsigned seed;
} pipe_cfg;

static long env_long(const char *name, long dflt)
{
    const char *s = getenv(name);
    return s && *s ? strtol(s, NULL, 10) : dflt;
}

/* "A:B" into an int and a double; 0 when absent or malformed. */
static int env_pair(const char *name, double *a, double *b)
{
    const char *s = getenv(name);
    char *end;
    if (!s || !*s)
        return 0;
    *a = strtod(s, &end);
    if (*end != ':')
        return 0;
    *b = strtod(end + 1, &end);
    return !*end;
}

int tb_pipe_enabled(void)
{
    return env_long("TSC_TESTBED_PP", 0) > 0;
}

/* splitmix64: a reproducible draw per (seed, rank, step). */
static double draw(unsigned seed, int rank, int step)
{
    uint64_t z = ((uint64_t)seed << 40) ^ ((uint64_t)rank << 20) ^ (uint64_t)step;
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double)(z >> 11) / 9007199254740992.0;
}

static void sleep_us(double us)
{
    if (us <= 0)
        return;
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    long long ns = (long long)(us * 1000.0);
    until.tv_sec += ns / 1000000000LL;
    until.tv_nsec += ns % 1000000000LL;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR)
        ;
}

static double factor(const pipe_cfg *c, int rank, int step)
{
    double f = 1.0;
    if (rank == c->slow_rank)
        f *= c->slow_f;
    if (c->stage == c->slow_stage)
        f *= c->stage_f;
    if (c->jitter > 0)
        f *= 1.0 - c->jitter + 2.0 * c->jitter * draw(c->seed, rank, step);
    return f;
}

static int check(ncclResult_t r, const char *what, int rank)
{
    if (r == ncclSuccess)
        return 0;
    fprintf(stderr, "tsc-testbed-rank %d: %s: %s (%s)\n", rank, what, ncclGetErrorString(r),
            ncclGetLastError(NULL));
    return 3;
}

/* Message k of a step between two stages carries a value the receiver
 * can check. */
static void fill_msg(float *b, size_t n, int from, int step, int k)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (float)((from * 31 + step * 7 + k * 3 + (int)(i % 89)) % 97) * 0.25f;
}

static int check_msg(const float *b, size_t n, int from, int step, int k, int rank)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != (float)((from * 31 + step * 7 + k * 3 + (int)(i % 89)) % 97) * 0.25f) {
            fprintf(stderr, "tsc-testbed-rank %d: wrong message from stage %d at %zu\n", rank,
                    from, i);
            return 4;
        }
    tb_checksum_add(0, b, n * sizeof *b);
    return 0;
}

typedef struct pipe_io {
    ncclComm_t pp;
    float *out, *in;
    size_t n;
    int step, rank;
    const pipe_cfg *c;
} pipe_io;

/* Sends to and/or receives from a neighbouring stage in one group, as
 * batched isend/irecv does.  to/from: stage or -1. */
static int exchange(pipe_io *io, int to, int k_out, int from, int k_in)
{
    int rc;
    if (to >= 0)
        fill_msg(io->out, io->n, io->c->stage, io->step, k_out);
    if ((rc = check(ncclGroupStart(), "GroupStart", io->rank)))
        return rc;
    if (to >= 0 && (rc = check(ncclSend(io->out, io->n, ncclFloat32, to, io->pp, NULL), "Send",
                               io->rank)))
        return rc;
    if (from >= 0 && (rc = check(ncclRecv(io->in, io->n, ncclFloat32, from, io->pp, NULL),
                                 "Recv", io->rank)))
        return rc;
    if ((rc = check(ncclGroupEnd(), "GroupEnd", io->rank)))
        return rc;
    return from >= 0 ? check_msg(io->in, io->n, from, io->step, k_in, io->rank) : 0;
}

static int one_step(pipe_io *io, ncclComm_t dp, ncclComm_t world, float *grad, size_t gn)
{
    const pipe_cfg *c = io->c;
    int s = c->stage, last = c->pp - 1, rc = 0;
    int prev = s > 0 ? s - 1 : -1, next = s < last ? s + 1 : -1;
    double f = factor(c, io->rank, io->step);
    double fwd = (double)c->fwd_us * f, bwd = 2.0 * (double)c->fwd_us * f;
    int warm = c->pp - s - 1 < c->mb ? c->pp - s - 1 : c->mb;
    int rest = c->mb - warm, fi = 0, bi = 0;
    /* message tags: forward k = k, backward k = 1000 + k */
    for (int i = 0; i < warm && !rc; i++) {
        if (prev >= 0 && (rc = exchange(io, -1, 0, prev, fi)))
            break;
        sleep_us(fwd);
        rc = exchange(io, next, fi, -1, 0);
        fi++;
    }
    if (!rc && rest > 0 && prev >= 0)
        rc = exchange(io, -1, 0, prev, fi);
    for (int i = 0; i < rest && !rc; i++) {
        sleep_us(fwd);
        if (next >= 0 && (rc = exchange(io, next, fi, next, 1000 + bi)))
            break;
        fi++;
        sleep_us(bwd);
        if (prev >= 0)
            rc = i == rest - 1 ? exchange(io, prev, 1000 + bi, -1, 0)
                               : exchange(io, prev, 1000 + bi, prev, fi);
        bi++;
    }
    for (int i = 0; i < warm && !rc; i++) {
        if ((rc = exchange(io, -1, 0, next, 1000 + bi)))
            break;
        sleep_us(bwd);
        if (prev >= 0)
            rc = exchange(io, prev, 1000 + bi, -1, 0);
        bi++;
    }
    if (rc)
        return rc;
    /* gradients across the stage's DP group, then one number across the job */
    for (size_t i = 0; i < gn; i++)
        grad[i] = (float)((io->rank + (int)i) % 7) * 0.5f;
    if ((rc = check(ncclAllReduce(grad, grad, gn, ncclFloat32, ncclSum, dp, NULL), "AllReduce",
                    io->rank)))
        return rc;
    float norm = 1.0f;
    if ((rc = check(ncclAllReduce(&norm, &norm, 1, ncclFloat32, ncclSum, world, NULL),
                    "AllReduce", io->rank)))
        return rc;
    if (norm != (float)(c->pp * c->dp)) {
        fprintf(stderr, "tsc-testbed-rank %d: wrong global sum %g\n", io->rank, norm);
        return 4;
    }
    tb_checksum_add(0, grad, gn * sizeof *grad);
    sleep_us((double)c->fwd_us / 2);   /* optimizer */
    return 0;
}

int tb_pipe_run(ncclComm_t world, int rank, int world_size, int steps)
{
    pipe_cfg c = {.pp = (int)env_long("TSC_TESTBED_PP", 1)};
    if (c.pp < 2 || world_size % c.pp) {
        fprintf(stderr, "tsc-testbed-rank: TSC_TESTBED_PP must divide WORLD_SIZE (%d)\n",
                world_size);
        return 2;
    }
    c.dp = world_size / c.pp;
    c.stage = rank % c.pp;
    c.dpr = rank / c.pp;
    c.mb = (int)env_long("TSC_TESTBED_MICROBATCHES", 6);
    c.fwd_us = env_long("TSC_TESTBED_FWD_US", 3000);
    c.act = (size_t)env_long("TSC_TESTBED_PP_ACT_BYTES", 256 << 10);
    c.slow_rank = c.slow_stage = -1;
    double a, b;
    if (env_pair("TSC_TESTBED_PP_SLOW_RANK", &a, &b))
        c.slow_rank = (int)a, c.slow_f = b;
    if (env_pair("TSC_TESTBED_PP_SLOW_STAGE", &a, &b))
        c.slow_stage = (int)a, c.stage_f = b;
    if (env_pair("TSC_TESTBED_PP_JITTER", &a, &b))
        c.jitter = a, c.seed = (unsigned)b;
    if (c.mb < 1 || c.fwd_us < 0 || c.act < 4 || c.jitter < 0 || c.jitter >= 1) {
        fprintf(stderr, "tsc-testbed-rank: bad pipeline settings\n");
        return 2;
    }
    /* Sends that meet their receive, in one piece (unless set already):
     * the test NCCL reads both when the stage communicators are made. */
    char mbox[32];
    snprintf(mbox, sizeof mbox, "%zu", c.act);
    setenv("FAKENCCL_P2P_SYNC", "1", 0);
    setenv("FAKENCCL_MBOX_BYTES", mbox, 0);
    ncclComm_t dp = NULL, pp = NULL;
    int rc = check(ncclCommSplit(world, c.stage, rank, &dp, NULL), "CommSplit", rank);
    if (!rc)
        rc = check(ncclCommSplit(world, c.dpr, c.stage, &pp, NULL), "CommSplit", rank);
    size_t n = c.act / sizeof(float), gn = 4096;
    pipe_io io = {.pp = pp, .n = n, .rank = rank, .c = &c};
    io.out = malloc(n * sizeof *io.out);
    io.in = malloc(n * sizeof *io.in);
    float *grad = malloc(gn * sizeof *grad);
    if (!rc && (!io.out || !io.in || !grad)) {
        fprintf(stderr, "tsc-testbed-rank: out of memory\n");
        rc = 5;
    }
    for (int s = 0; s < steps && !rc; s++) {
        io.step = s;
        rc = one_step(&io, dp, world, grad, gn);
    }
    free(io.out);
    free(io.in);
    free(grad);
    if (pp)
        ncclCommDestroy(pp);
    if (dp)
        ncclCommDestroy(dp);
    return rc;
}
