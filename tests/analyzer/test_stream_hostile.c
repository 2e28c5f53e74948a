/* Hostile ranks under the streaming report (driver/stream.h): a dump whose
 * EVENTS chunk claims billions of records, one whose slots run past the end
 * of the file, and one larger than the per-rank limit are each refused or
 * cut with a problem naming the file, without allocating what they claim
 * (the test runs under an address-space limit where ASan allows it), and
 * the other ranks are still loaded and analysed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <cmocka.h>

#include "crc32c.h"
#include "driver/analyze.h"
#include "driver/stream.h"
#include "gen_job.h"
#include "gen_tmpdir.h"
#include "tsc_format.h"

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

/* Rewrites the payload length of the first EVENTS chunk of path, with a
 * valid header CRC, as a hostile writer would. */
static void claim_payload(const char *path, uint32_t payload_len)
{
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    tsc_file_header fh;
    assert_int_equal(fread(&fh, sizeof fh, 1, f), 1);
    long off = (long)fh.header_size;
    for (;;) {
        tsc_chunk_header h;
        assert_int_equal(fseek(f, off, SEEK_SET), 0);
        assert_int_equal(fread(&h, sizeof h, 1, f), 1);
        assert_int_equal(h.magic, TSC_CHUNK_MAGIC);
        if (h.type == TSC_CHUNK_EVENTS) {
            h.payload_len = payload_len;
            h.header_crc = tsc_crc32c(0, &h, offsetof(tsc_chunk_header, header_crc));
            assert_int_equal(fseek(f, off, SEEK_SET), 0);
            assert_int_equal(fwrite(&h, sizeof h, 1, f), 1);
            break;
        }
        off += (long)(sizeof h + h.payload_len);
    }
    assert_int_equal(fclose(f), 0);
}

static long size_of(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fclose(f);
    return n;
}

static const tsa_problem *problem_of(const tsa_job *job, const char *file, const char *needle)
{
    for (size_t i = 0; i < job->n_problems; i++)
        if (strstr(job->problems[i].file, file) && strstr(job->problems[i].message, needle))
            return &job->problems[i];
    return NULL;
}

static int has_rank(const tsa_job *job, int32_t rank)
{
    for (size_t i = 0; i < job->n_ranks; i++)
        if (job->ranks[i].rank == rank)
            return 1;
    return 0;
}

static void test_hostile_ranks_refused_others_reported(void **state)
{
    (void)state;
    char dir[300], path[400];
    snprintf(dir, sizeof dir, "%s/job", tmpdir);
    gen_options o;
    gen_default_options(&o);
    o.ranks = 5;
    o.steps = 8;
    o.dir = dir;
    gen_truth t;
    assert_int_equal(gen_job(&o, &t), 0);
    /* Rank 1: ~4 GiB of slots claimed (134M records). */
    snprintf(path, sizeof path, "%s/tscope_r1_node0_10001_gen-run.tsd", dir);
    claim_payload(path, 0xFFFFFFE0u);
    /* Rank 2: a slots table twice the file. */
    snprintf(path, sizeof path, "%s/tscope_r2_node0_10002_gen-run.tsd", dir);
    long normal = size_of(path);
    claim_payload(path, (uint32_t)(2 * normal) & ~31u);
    /* Rank 3: 8 MiB over a 4 MiB per-rank limit. */
    snprintf(path, sizeof path, "%s/tscope_r3_node0_10003_gen-run.tsd", dir);
    FILE *f = fopen(path, "ab");
    assert_non_null(f);
    static char zeros[1 << 20];
    for (int i = 0; i < 8; i++)
        assert_int_equal(fwrite(zeros, sizeof zeros, 1, f), 1);
    fclose(f);
    assert_true(normal < (4 << 20));

#ifndef UNDER_ASAN
    /* What the claims would take is far above this; the job itself far below. */
    struct rlimit rl = {512ul << 20, 512ul << 20};
    assert_int_equal(setrlimit(RLIMIT_AS, &rl), 0);
#endif
    tsa_load_options lo = {.quiet = 1, .lean = 1};
    tsa_stream_limits lim = {.jobs = 2, .max_rank_bytes = 4u << 20}; /* streamed, whatever the size */
    tsa_job *job = NULL;
    tsa_stream *st = NULL;
    char err[512] = "";
    assert_int_equal(tsa_stream_load(dir, &lo, NULL, &lim, &job, &st, err, sizeof err), 0);
    const tsa_problem *p = problem_of(job, "tscope_r1_", "exceeds the limit");
    assert_non_null(p);
    assert_true(p->offset > 0);
    assert_non_null(problem_of(job, "tscope_r2_", "truncated EVENTS chunk"));
    p = problem_of(job, "tscope_r3_", "over the per-rank limit of 4194304 bytes");
    assert_non_null(p);
    assert_false(has_rank(job, 3));
    assert_true(has_rank(job, 0));
    assert_true(has_rank(job, 4));
    tsa_analysis *a = tsa_analyze_with(job, NULL, tsa_stream_runner(st));
    assert_non_null(a);
    assert_int_equal(a->n_ranks, job->n_ranks);
    assert_true(a->steps > 0);
    tsa_analysis_free(a);
    tsa_stream_free(st);
    tsa_job_free(job);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hostile_ranks_refused_others_reported),
    };
    return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
