/* Benchmark: the pipeline what-if on a generated job of 1,024 workers
 * (8 stages x 128 DP ranks, 1F1B with 8 micro-batches) and 100 steps.
 * The generator writes each step's graph (compute, batched send/recv
 * between stages, a gradient AllReduce per stage's DP group, one global
 * AllReduce), gives compute some noise and one worker a 1.5x slowdown,
 * and takes the recorded times from a replay.  Timed: evaluation order,
 * topology, ideal durations and every replay (S, savings, class).
 *
 *   bench_whatif [DP] [PP] [STEPS]      (default 128 8 100) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "whatif/wi_internal.h"

typedef struct key {
    uint64_t k;          /* (dp, from stage, to stage, index) */
    uint32_t node;
    uint8_t send;
} key;

static int by_k(const void *a, const void *b)
{
    const key *x = a, *y = b;
    if (x->k != y->k)
        return x->k < y->k ? -1 : 1;
    return (int)y->send - (int)x->send;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t rng = 88172645463325252ull;
static double unif(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

static wi_build B;
static key *keys;
static size_t n_keys, cap_keys;
static uint32_t *last;   /* per rank: last node in this step */

static uint32_t add(int rank, uint32_t step, int kind, int64_t dur)
{
    wi_node n = {.dur = dur, .ideal = dur, .rank = rank, .step = step, .kind = (uint8_t)kind,
                 .okind = kind ? TSA_OK_P2P : TSA_OK_COMPUTE, .src = -1,
                 .sig = kind ? 1 : 2};
    if (wi_graph_add_node(&B.g, &n))
        exit(1);
    uint32_t me = (uint32_t)B.g.n_nodes - 1;
    if (last[rank] != UINT32_MAX && wi_graph_add_dep(&B.g, me, last[rank]))
        exit(1);
    last[rank] = me;
    return me;
}

static void want(uint64_t k, uint32_t node, int send)
{
    if (n_keys == cap_keys) {
        cap_keys = cap_keys ? 2 * cap_keys : 4096;
        keys = realloc(keys, cap_keys * sizeof *keys);
        if (!keys)
            exit(1);
    }
    keys[n_keys++] = (key){k, node, (uint8_t)send};
}

#define KEY(d, a, b, i) (((uint64_t)(d) << 40) | ((uint64_t)(a) << 32) | ((uint64_t)(b) << 24) | (uint64_t)(i))

/* One exchange node: sends/receives to neighbouring stages, as the test
 * bed's 1F1B does (rank_pipe.c). */
static void exchange(int rank, uint32_t step, int d, int s, int to, int ko, int from, int ki)
{
    uint32_t x = add(rank, step, WI_COMM, 20000);
    if (to >= 0)
        want(KEY(d, s, to, ko), x, 1);
    if (from >= 0)
        want(KEY(d, from, s, ki), x, 0);
}

int main(int argc, char **argv)
{
    int DP = argc > 1 ? atoi(argv[1]) : 128, PP = argc > 2 ? atoi(argv[2]) : 8;
    int STEPS = argc > 3 ? atoi(argv[3]) : 100, M = 8;
    int R = DP * PP, slow = 3 * PP + 5;
    B.n_ranks = (size_t)R;
    B.host_mode = calloc((size_t)R, 1);
    last = malloc((size_t)R * sizeof *last);
    uint32_t *mem = malloc((size_t)R * sizeof *mem);
    if (!B.host_mode || !last || !mem)
        return 1;
    memset(B.host_mode, 1, (size_t)R);
    double t0 = now();
    for (uint32_t st = 0; st < (uint32_t)STEPS; st++) {
        n_keys = 0;
        for (int r = 0; r < R; r++)
            last[r] = UINT32_MAX;
        for (int r = 0; r < R; r++) {
            int d = r / PP, s = r % PP, lastst = PP - 1;
            int prev = s > 0 ? s - 1 : -1, next = s < lastst ? s + 1 : -1;
            double f = (1.0 + 0.04 * (unif() - 0.5)) * (r == slow ? 1.5 : 1.0);
            int64_t fw = (int64_t)(1e6 * f), bw = 2 * fw;
            int warm = PP - s - 1 < M ? PP - s - 1 : M, rest = M - warm, fi = 0, bi = 0;
            for (int i = 0; i < warm; i++) {
                if (prev >= 0)
                    exchange(r, st, d, s, -1, 0, prev, fi);
                add(r, st, WI_COMPUTE, fw);
                exchange(r, st, d, s, next, fi, -1, 0);
                fi++;
            }
            if (rest > 0 && prev >= 0)
                exchange(r, st, d, s, -1, 0, prev, fi);
            for (int i = 0; i < rest; i++) {
                add(r, st, WI_COMPUTE, fw);
                if (next >= 0)
                    exchange(r, st, d, s, next, fi, next, 1000 + bi);
                fi++;
                add(r, st, WI_COMPUTE, bw);
                if (prev >= 0) {
                    if (i == rest - 1)
                        exchange(r, st, d, s, prev, 1000 + bi, -1, 0);
                    else
                        exchange(r, st, d, s, prev, 1000 + bi, prev, fi);
                }
                bi++;
            }
            for (int i = 0; i < warm; i++) {
                exchange(r, st, d, s, -1, 0, next, 1000 + bi);
                add(r, st, WI_COMPUTE, bw);
                if (prev >= 0)
                    exchange(r, st, d, s, prev, 1000 + bi, -1, 0);
                bi++;
            }
            want(KEY(1u << 20, 0, s, 0), add(r, st, WI_COMM, 100000), 0);   /* DP AllReduce */
            want(KEY(1u << 21, 0, 0, 0), add(r, st, WI_COMM, 10000), 0);    /* global */
            add(r, st, WI_COMPUTE, 500000);                                 /* optimizer */
        }
        qsort(keys, n_keys, sizeof *keys, by_k);
        for (size_t i = 0; i < n_keys;) {
            size_t j = i;
            while (j < n_keys && keys[j].k == keys[i].k)
                j++;
            for (size_t q = i; q < j; q++)
                mem[q - i] = keys[q].node;
            if (wi_graph_add_hub(&B.g, st, mem, j - i))
                return 1;
            for (size_t q = i; q < j; q++)
                if (wi_graph_add_gate(&B.g, keys[q].node, (uint32_t)B.g.n_hubs - 1))
                    return 1;
            if (j - i == 2 && keys[i].send) {
                wi_pair p = {B.g.nodes[keys[i].node].rank, B.g.nodes[keys[i + 1].node].rank, 0};
                if (B.n_pairs == B.cap_pairs) {
                    B.cap_pairs = B.cap_pairs ? 2 * B.cap_pairs : 4096;
                    B.pairs = realloc(B.pairs, B.cap_pairs * sizeof *B.pairs);
                }
                B.pairs[B.n_pairs++] = p;
            }
            i = j;
        }
    }
    if (wi_graph_finish(&B.g) || wi_graph_order(&B.g))
        return 1;
    /* the record: one replay; the first send of each pipeline comes first */
    wi_times t;
    wi_fix rec = {.by = WI_FIX_NONE, .raw_gaps = 1};
    if (wi_times_alloc(&t, &B.g))
        return 1;
    for (size_t s = 0; s < B.g.n_steps; s++) {
        for (size_t i = B.g.step_node[s]; i < B.g.step_node[s + 1]; i++)
            B.g.nodes[i].rec_start = (int64_t)s * 1000000000;
        wi_replay_step(&B.g, s, &rec, &t);
        for (size_t i = B.g.step_node[s]; i < B.g.step_node[s + 1]; i++) {
            B.g.nodes[i].rec_start = t.start[i];
            B.g.nodes[i].rec_end = t.end[i];
        }
    }
    for (size_t p = 0; p < B.n_pairs; p++)
        B.pairs[p].send_start = (int64_t)(B.pairs[p].sender % PP);
    wi_times_free(&t);
    double t1 = now();

    tsa_pipe_result r = {0};
    r.n_ranks = (size_t)R;
    r.stage_of = calloc((size_t)R, sizeof *r.stage_of);
    r.dp_of = calloc((size_t)R, sizeof *r.dp_of);
    r.global_rank = calloc((size_t)R, sizeof *r.global_rank);
    r.saved_worker_ns = calloc((size_t)R, sizeof *r.saved_worker_ns);
    r.step_number = calloc(B.g.n_steps + 1, sizeof *r.step_number);
    for (int i = 0; i < R; i++)
        r.global_rank[i] = i;
    double t2 = now();
    if (!wi_topology(&B, r.stage_of, r.dp_of, &r.n_stages, &r.n_dp))
        return 1;
    r.saved_stage_ns = calloc(r.n_stages, sizeof *r.saved_stage_ns);
    r.saved_dp_ns = calloc(r.n_dp, sizeof *r.saved_dp_ns);
    double t3 = now();
    if (wi_set_ideal(&B))
        return 1;
    double t4 = now();
    if (wi_blame(&B, &r))
        return 1;
    double t5 = now();
    /* the order is part of the what-if: time it again on the built graph */
    double t6 = now();
    if (wi_graph_order(&B.g))
        return 1;
    double t7 = now();
    printf("what-if on %d workers (%zu stages x %zu DP ranks) x %zu steps: %zu operations, %zu links\n",
           R, r.n_stages, r.n_dp, r.steps, B.g.n_nodes, B.g.n_hubs);
    printf("  generate the job          %7.2f s (not part of the what-if)\n", t1 - t0);
    printf("  evaluation order          %7.2f s\n", t7 - t6);
    printf("  topology                  %7.2f s\n", t3 - t2);
    printf("  ideal durations           %7.2f s\n", t4 - t3);
    printf("  replays (S, savings)      %7.2f s\n", t5 - t4);
    printf("  what-if total             %7.2f s (limit 10 s)\n", (t7 - t6) + (t5 - t2));
    printf("  S %.3f, class %s, culprit %d (slowed worker %d)\n", r.slowdown,
           tsa_pipe_class_id(r.cls) ? tsa_pipe_class_id(r.cls) : "none", r.culprit, slow);
    tsa_pipe_free(&r);
    wi_build_free(&B);
    free(keys);
    free(last);
    free(mem);
    return 0;
}
