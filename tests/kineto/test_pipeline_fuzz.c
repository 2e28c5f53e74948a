/* Deterministic mutation fuzzing of the whole analyzer pipeline (load ->
 * analyse -> text and JSON report -> trace export), run in every suite
 * for a short fixed budget: rank 1 of a 2-rank job (tscope dumps, or
 * torch.profiler traces) is mutated, rank 0 stays good.  The rules: no
 * crash, leak or UB (the sanitizer build), text outputs without control
 * characters, JSON outputs strict (strict_json.h).  TSCOPE_FUZZ_ROUNDS
 * and TSCOPE_FUZZ_SEED run it longer or elsewhere (scripts/fuzz-pipeline.sh
 * runs the coverage-guided libFuzzer harness for hours). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fuzz_exercise.h"
#include "fuzz_pipeline.h"
#include "pipeline_seeds.h"
#include "test_util.h"

#define DEFAULT_ROUNDS 2000

static uint64_t rng;

static uint64_t rnd(void) { return fuzz_rand(&rng); }

static size_t below(size_t n) { return n ? (size_t)(rnd() % n) : 0; }

static void mutate_dump(uint8_t *d, size_t *len)
{
    size_t n = *len;
    switch (below(4)) {
    case 0:
        for (size_t i = 1 + below(8); i; i--)
            d[below(n)] ^= (uint8_t)(1u << below(8));
        break;
    case 1: {
        size_t at = below(n), run = 1 + below(64);
        for (size_t i = 0; i < run && at + i < n; i++)
            d[at + i] = (uint8_t)rnd();
        break;
    }
    case 2:
        *len = below(n + 1);
        break;
    default: /* words that matter: huge times, ids, lengths */
        for (size_t i = 1 + below(4); i; i--) {
            size_t at = below(n > 8 ? n - 8 : 1);
            uint64_t v = rnd() & 1 ? UINT64_MAX - below(3) : (uint64_t)1 << below(64);
            memcpy(d + at, &v, n - at < 8 ? n - at : 8);
        }
        break;
    }
    /* mostly with valid CRCs, so the mutation reaches the model */
    if (rnd() % 4)
        fuzz_fix_crcs(d, *len);
}

static const char *const json_pieces[] = {
    "\"\\u0000\"", "\"\\ud800\"", "\"\x1b[2J\"", "\"\xff\xfe\"", "1e999", "-0", "[[[[",
    "]]]]", "{}", "null", "\"ts\":", "\"dur\":-5,", "\"ph\":\"X\",", "\"name\":\"\n\",",
    "99999999999999999999999", ",", ":", "\"cat\":\"kernel\",", "\"args\":{\"stream\":7},",
    "\"pid\":0,\"tid\":7,", "\"ph\":\"M\",\"name\":\"thread_name\",\"args\":{\"name\":\"\x07\"},",
};

static void mutate_json(uint8_t *d, size_t *len, size_t cap)
{
    size_t n = *len;
    switch (below(4)) {
    case 0:
        for (size_t i = 1 + below(8); i; i--)
            d[below(n)] = (uint8_t)"{}[]\",:0123456789-eE.\\ ntf\x1b\xff"[below(29)];
        break;
    case 1: /* a piece of JSON (or non-JSON) put in somewhere */
        for (size_t i = 1 + below(3); i; i--) {
            const char *p = json_pieces[below(sizeof json_pieces / sizeof *json_pieces)];
            size_t m = strlen(p), at = below(n + 1);
            if (n + m > cap || at > n)
                break;
            memmove(d + at + m, d + at, n - at);
            memcpy(d + at, p, m);
            n += m;
        }
        *len = n;
        break;
    case 2:
        *len = below(n + 1);
        break;
    default: { /* a slice repeated: events twice, keys twice */
        uint8_t slice[512];
        size_t from = below(n), m = 1 + below(sizeof slice), at = below(n + 1);
        if (m > n - from)
            m = n - from;
        if (!m || n + m > cap || at > n)
            break;
        memcpy(slice, d + from, m);
        memmove(d + at + m, d + at, n - at);
        memcpy(d + at, slice, m);
        *len = n + m;
        break;
    }
    }
}

static void test_pipeline_mutations(void **state)
{
    (void)state;
    char *root = tu_tempdir("pipefuzz");
    pipeline_seed dumps, kineto;
    assert_int_equal(pipeline_seeds_make(root, &dumps, &kineto), 0);
    const char *env = getenv("TSCOPE_FUZZ_ROUNDS");
    uint64_t rounds = env ? strtoull(env, NULL, 10) : DEFAULT_ROUNDS;
    env = getenv("TSCOPE_FUZZ_SEED");
    uint64_t seed = env ? strtoull(env, NULL, 10) : 1;

    fuzz_pipeline_stats st = {0};
    char why[256];
    /* the seeds themselves pass */
    assert_int_equal(fuzz_pipeline_dir(dumps.dir, root, &st, why, sizeof why), 0);
    assert_int_equal(fuzz_pipeline_dir(kineto.dir, root, &st, why, sizeof why), 0);
    assert_int_equal(st.analysed, 2);

    size_t cap = (dumps.orig_len > kineto.orig_len ? dumps.orig_len : kineto.orig_len) + 8192;
    uint8_t *work = malloc(cap);
    clock_t t0 = clock();
    for (uint64_t round = 0; round < rounds; round++) {
        rng = 0x9e3779b97f4a7c15ull ^ ((seed * rounds + round) * 0x100000001b3ull) ^ 1;
        pipeline_seed *s = round % 2 ? &kineto : &dumps;
        memcpy(work, s->orig, s->orig_len);
        size_t len = s->orig_len;
        for (size_t k = 1 + below(2); k; k--) {
            if (s == &dumps)
                mutate_dump(work, &len);
            else
                mutate_json(work, &len, cap);
        }
        assert_int_equal(pipeline_seed_put(s, work, len), 0);
        if (fuzz_pipeline_dir(s->dir, root, &st, why, sizeof why))
            fail_msg("seed %llu round %llu (%s): %s; input left in %s",
                     (unsigned long long)seed, (unsigned long long)round,
                     s == &dumps ? "dump" : "kineto", why, s->victim);
    }
    double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
    printf("pipeline fuzz: %llu rounds in %.2f s CPU: %zu loaded, %zu analysed, "
           "%zu traces exported, 0 findings\n",
           (unsigned long long)rounds, secs, st.loaded, st.analysed, st.exported);
    /* the mutations must not all be refused at the door */
    assert_true(st.analysed > rounds / 4);
    free(work);
    pipeline_seeds_free(&dumps);
    pipeline_seeds_free(&kineto);
    tu_rmtree(root);
    free(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pipeline_mutations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
