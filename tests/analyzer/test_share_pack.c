/* The share packer of tscope-report-mpi (analyzer/mpi/share_pack.h):
 * a loaded job packed and unpacked into an empty job analyses to the very
 * same JSON report; every cut-short or corrupted buffer is refused without
 * a crash or a leak (the buffer crosses process boundaries). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "gen_run.h"
#include "job_build.h"
#include "mpi/share_pack.h"

static char *report_json_of(tsa_job *job)
{
    tsa_analysis *a = tsa_analyze(job, NULL);
    assert_non_null(a);
    char *s = tsa_report_json(a);
    assert_non_null(s);
    tsa_analysis_free(a);
    return s;
}

/* A copy of job made of its packed form; run id and directory as the
 * receiving process has them from its own listing. */
static tsa_job *round_trip(const tsa_job *job, const tsa_pack_buf *b)
{
    tsa_job *copy = tsa_job_new(job->dir);
    assert_non_null(copy);
    copy->run_id = strdup(job->run_id);
    assert_int_equal(tsa_share_unpack(b->data, b->len, copy, NULL, NULL), 0);
    return copy;
}

/* Stands for the receives: hands out the sender's deferred arrays. */
typedef struct bulk_reader {
    const tsa_pack_buf *b;
    size_t next;
} bulk_reader;

static int fetch_bulk(void *dst, size_t bytes, void *ctx)
{
    bulk_reader *br = ctx;
    if (br->next >= br->b->n_bulk || br->b->bulk[br->next].bytes != bytes)
        return -1;
    memcpy(dst, br->b->bulk[br->next++].data, bytes);
    return 0;
}

static void test_round_trip_same_report(void **state)
{
    (void)state;
    gen_options o;
    gen_default_options(&o);
    o.ranks = 4;
    o.steps = 8;
    o.straggler = 2;
    o.slowdown = 0.4;
    o.flops = 1e12;
    o.mem_base = 64u << 20;
    run r = {0}; /* only loaded here: done() frees no analysis */
    generate(&o, "pack", &r);
    tsa_load_options lo = {.quiet = 1, .lean = 1};
    assert_int_equal(tsa_job_load(r.dir, &lo, &r.job), 0);
    tsa_pack_buf b = {0};
    assert_int_equal(tsa_share_pack(r.job, 0, &b), 0);
    tsa_job *copy = round_trip(r.job, &b);
    assert_int_equal(copy->n_ranks, r.job->n_ranks);
    char *want = report_json_of(r.job), *got = report_json_of(copy);
    assert_string_equal(got, want);
    free(want);
    free(got);
    tsa_job_free(copy);

    /* Every prefix of the buffer is refused (a short receive). */
    for (size_t len = 0; len < b.len; len += 1 + len / 64) {
        tsa_job *j = tsa_job_new(r.job->dir);
        assert_non_null(j);
        assert_int_equal(tsa_share_unpack(b.data, len, j, NULL, NULL), -1);
        tsa_job_free(j);
    }
    /* Lengths and counts set to all ones, one 8-byte word at a time
     * (counts, string lengths, array sizes among them): the reader must
     * never trust them. */
    for (size_t off = 8; off + 8 <= b.len && off < 4096; off += 8) {
        unsigned char save[8];
        memcpy(save, b.data + off, 8);
        memset(b.data + off, 0xff, 8);
        tsa_job *j = tsa_job_new(r.job->dir);
        assert_non_null(j);
        (void)tsa_share_unpack(b.data, b.len, j, NULL, NULL); /* any result, no crash */
        tsa_job_free(j);
        memcpy(b.data + off, save, 8);
    }
    tsa_pack_buf_free(&b);

    /* Deferred mode, as tscope-report-mpi ships a share: header in the
     * buffer, arrays fetched one by one in the listed order. */
    tsa_pack_buf d = {.defer = 1};
    assert_int_equal(tsa_share_pack(r.job, 0, &d), 0);
    assert_true(d.n_bulk > 0);
    bulk_reader br = {&d, 0};
    tsa_job *dcopy = tsa_job_new(r.job->dir);
    assert_non_null(dcopy);
    dcopy->run_id = strdup(r.job->run_id);
    assert_int_equal(tsa_share_unpack(d.data, d.len, dcopy, fetch_bulk, &br), 0);
    assert_int_equal(br.next, d.n_bulk);
    want = report_json_of(r.job);
    got = report_json_of(dcopy);
    assert_string_equal(got, want);
    free(want);
    free(got);
    tsa_job_free(dcopy);
    tsa_pack_buf_free(&d);
    done(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_same_report),
    };
    return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
