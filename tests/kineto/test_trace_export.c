/* The Perfetto export, parsed back with cJSON and checked against the job
 * it came from: structure, aligned timing to the nanosecond, NCCL wait and
 * transfer, flows, escaping, gzip, size-capped parts and step windows. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load/job_build.h"
#include "load/kineto_load.h"
#include "kineto_gen.h"
#include "test_util.h"
#include "report/trace_export.h"

#define US 1000LL
#define STEPS 4
#define OFFSET1 (5 * US)     /* rank 1's clock correction */
#define DELAY1 40            /* rank 1 is slower by 40 us per step */

typedef struct fixture {
    char *dir;
    tsa_job *job;
} fixture;

/* What the analysis would have filled: steps from ProfilerStep ranges and
 * kernel phases by position in the step. */
static void fake_analysis(tsa_job *job)
{
    for (size_t ri = 0; ri < job->n_ranks; ri++) {
        tsa_rank *r = &job->ranks[ri];
        r->steps = calloc(r->n_ranges, sizeof *r->steps);
        assert_non_null(r->steps);
        r->n_steps = r->n_ranges;
        for (size_t s = 0; s < r->n_ranges; s++) {
            r->steps[s].start_ns = r->ranges[s].start_ns;
            r->steps[s].end_ns = r->ranges[s].end_ns;
            r->steps[s].phase_ns[TSA_PHASE_FORWARD] = 200 * US;
            r->steps[s].phase_ns[TSA_PHASE_DATA] = 5 * US;   /* idle until the H2D copy */
        }
        static const uint8_t phase[4] = {TSA_PHASE_FORWARD, TSA_PHASE_BACKWARD, TSA_PHASE_COMM,
                                         TSA_PHASE_OPTIMIZER};
        for (size_t k = 0; k < r->n_kernels; k++)
            r->kernels[k].phase = phase[k % 4];
    }
    job->ranks[1].clock_offset_ns = OFFSET1;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->dir = tu_tempdir("trace");
    for (int rank = 0; rank < 2; rank++) {
        char path[512];
        snprintf(path, sizeof path, "%s/node0_%d.1.pt.trace.json", f->dir, KGEN_PID(rank));
        kgen_opts o = {.rank = rank, .world_size = 2, .steps = STEPS,
                       .base_ns = 1700000000000000000LL, .delay_us = rank ? DELAY1 : 0,
                       .odd_names = rank == 0};
        if (kgen_write(path, &o))
            return -1;
    }
    if (tsa_kineto_load(f->dir, &f->job) != 0)
        return -1;
    fake_analysis(f->job);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    tsa_job_free(f->job);
    tu_rmtree(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

static cJSON *load_json(const char *path)
{
    char *text = tu_read_file(path, NULL);
    assert_non_null(text);
    cJSON *j = cJSON_Parse(text);
    free(text);
    assert_non_null(j);
    return j;
}

static int64_t origin_of(cJSON *doc)
{
    cJSON *o = cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "otherData"), "origin_ns");
    assert_true(cJSON_IsString(o));
    return strtoll(o->valuestring, NULL, 10);
}

static int64_t ns_of(cJSON *ev, const char *key)
{
    return (int64_t)llround(cJSON_GetObjectItem(ev, key)->valuedouble * 1000.0);
}

static const char *str_of(cJSON *ev, const char *key)
{
    cJSON *v = cJSON_GetObjectItem(ev, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

static size_t count_cat(cJSON *events, const char *ph, const char *cat)
{
    size_t n = 0;
    cJSON *ev;
    cJSON_ArrayForEach(ev, events)
        if (!strcmp(str_of(ev, "ph"), ph) && (!cat || !strcmp(str_of(ev, "cat"), cat)))
            n++;
    return n;
}

static char **export(fixture *f, const tsa_trace_options *o, const char *name, size_t *n)
{
    char path[512], err[256];
    snprintf(path, sizeof path, "%s/%s", f->dir, name);
    char **files;
    int rc = tsa_trace_export(f->job, o, path, &files, n, err, sizeof err);
    if (rc)
        fail_msg("export failed: %s", err);
    return files;
}

static void free_files(char **files, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(files[i]);
    free(files);
}

static void test_structure_and_timing(void **state)
{
    fixture *f = *state;
    size_t n;
    char **files = export(f, NULL, "out.json", &n);
    assert_int_equal(n, 1);
    cJSON *doc = load_json(files[0]);
    cJSON *events = cJSON_GetObjectItem(doc, "traceEvents");
    assert_true(cJSON_IsArray(events));
    int64_t origin = origin_of(doc);
    assert_int_equal(origin, f->job->ranks[0].first_ns);   /* rank 1 is shifted later */

    /* processes and tracks are named */
    int p0 = 0, p1 = 0, autograd = 0, stream7 = 0, steps = 0, phases = 0;
    cJSON *ev;
    cJSON_ArrayForEach(ev, events) {
        if (strcmp(str_of(ev, "ph"), "M"))
            continue;
        const char *nm = str_of(cJSON_GetObjectItem(ev, "args"), "name");
        p0 += !strcmp(nm, "rank 0 (node0)");
        p1 += !strcmp(nm, "rank 1 (node0)");
        autograd += !strcmp(nm, "pt_autograd_0 (200)");
        stream7 += !strcmp(nm, "GPU 0 stream 7");
        steps += !strcmp(nm, "steps");
        phases += !strcmp(nm, "phases");
    }
    assert_int_equal(p0, 1);
    assert_int_equal(p1, 1);
    assert_int_equal(autograd, 2);
    assert_int_equal(stream7, 1);   /* rank 1's GPU is device 1 */
    assert_int_equal(steps, 2);
    assert_int_equal(phases, 2);

    /* one slice per record */
    size_t kernels = 0, copies = 0, apis = 0, syncs = 0, nccl = 0, ranges = 0;
    for (size_t i = 0; i < f->job->n_ranks; i++) {
        const tsa_rank *r = &f->job->ranks[i];
        kernels += r->n_kernels, copies += r->n_copies, apis += r->n_apis;
        syncs += r->n_syncs, nccl += r->n_nccl, ranges += r->n_ranges;
    }
    assert_int_equal(count_cat(events, "X", "kernel"), kernels);
    assert_int_equal(count_cat(events, "X", "copy"), copies);
    assert_int_equal(count_cat(events, "X", "cuda_api"), apis);
    assert_int_equal(count_cat(events, "X", "sync"), syncs);
    assert_int_equal(count_cat(events, "X", "nccl"), nccl);
    assert_int_equal(count_cat(events, "X", "comm"), nccl);
    assert_int_equal(count_cat(events, "X", "range"), ranges);
    assert_int_equal(count_cat(events, "X", "step"), 2 * STEPS);
    /* data stall, forward, backward, optimizer per step */
    assert_int_equal(count_cat(events, "X", "phase"), 2 * STEPS * 4);
    cJSON_ArrayForEach(ev, events) {
        if (strcmp(str_of(ev, "cat"), "phase") || strcmp(str_of(ev, "name"), "data"))
            continue;
        int64_t pid = (int64_t)cJSON_GetObjectItem(ev, "pid")->valuedouble;
        const tsa_rank *r = &f->job->ranks[pid];
        int64_t ts = ns_of(ev, "ts") + origin - r->clock_offset_ns;
        int found = 0;
        for (size_t s = 0; s < r->n_steps; s++)
            found += ts == r->steps[s].start_ns;
        assert_int_equal(found, 1);
        assert_int_equal(ns_of(ev, "dur"), 5 * US);
    }
    /* flows: every kernel and copy from its launch, NCCL kernels also from the call */
    size_t flows = kernels + copies + nccl;
    assert_int_equal(count_cat(events, "s", NULL), flows);
    assert_int_equal(count_cat(events, "f", NULL), flows);

    /* every kernel slice sits at its aligned time, to the nanosecond, and
     * the NCCL ones carry wait and transfer of their instance */
    size_t checked = 0;
    cJSON_ArrayForEach(ev, events) {
        if (strcmp(str_of(ev, "cat"), "kernel"))
            continue;
        int64_t pid = (int64_t)cJSON_GetObjectItem(ev, "pid")->valuedouble;
        const tsa_rank *r = &f->job->ranks[pid];
        int64_t ts = ns_of(ev, "ts") + origin, dur = ns_of(ev, "dur");
        cJSON *args = cJSON_GetObjectItem(ev, "args");
        int corr = cJSON_GetObjectItem(args, "correlation")->valueint;
        const tsa_kernel *k = NULL;
        for (size_t i = 0; i < r->n_kernels; i++)
            if (r->kernels[i].correlation == (uint32_t)corr)
                k = &r->kernels[i];
        assert_non_null(k);
        assert_int_equal(ts, k->start_ns + r->clock_offset_ns);
        assert_int_equal(dur, k->end_ns - k->start_ns);
        if (k->nccl >= 0) {
            double wait = cJSON_GetObjectItem(args, "wait_us")->valuedouble;
            double transfer = cJSON_GetObjectItem(args, "transfer_us")->valuedouble;
            /* rank 1 starts DELAY1 later and its clock reads OFFSET1 ahead */
            if (pid == 0) {
                assert_float_equal(wait, DELAY1 + 5, 1e-9);
                assert_float_equal(transfer, 900 - 450 - DELAY1 - 5, 1e-9);
            } else {
                assert_float_equal(wait, 0, 1e-9);
                assert_float_equal(transfer, 900 - 450 - DELAY1, 1e-9);
            }
            assert_int_equal(cJSON_GetObjectItem(args, "bytes")->valuedouble,
                             KGEN_ALLREDUCE_NELEMS * 4);
            assert_string_equal(str_of(args, "op"), "AllReduce");
            assert_true(strlen(str_of(args, "comm")) == 18);
        }
        checked++;
    }
    assert_int_equal(checked, kernels);

    /* the odd kernel name survives escaping: invalid byte -> U+FFFD */
    int odd = 0;
    cJSON_ArrayForEach(ev, events)
        odd += !strcmp(str_of(ev, "name"), "odd \"q\" back\\slash \x01 \xef\xbf\xbd end");
    assert_int_equal(odd, 1);
    cJSON_Delete(doc);
    free_files(files, n);
}

static void test_gzip(void **state)
{
    fixture *f = *state;
    size_t n;
    char **files = export(f, NULL, "out.json.gz", &n);
    assert_int_equal(n, 1);
    FILE *raw = fopen(files[0], "rb");
    unsigned char magic[2] = {0};
    assert_int_equal(fread(magic, 1, 2, raw), 2);
    fclose(raw);
    assert_int_equal(magic[0], 0x1f);
    assert_int_equal(magic[1], 0x8b);
    cJSON *doc = load_json(files[0]);
    size_t kernels = f->job->ranks[0].n_kernels + f->job->ranks[1].n_kernels;
    assert_int_equal(count_cat(cJSON_GetObjectItem(doc, "traceEvents"), "X", "kernel"), kernels);
    cJSON_Delete(doc);
    free_files(files, n);
}

static void test_split_parts(void **state)
{
    fixture *f = *state;
    tsa_trace_options o;
    tsa_trace_default_options(&o);
    o.max_bytes = 8000;
    size_t n;
    char **files = export(f, &o, "split.json", &n);
    assert_true(n >= 3);
    char *second = tsa_trace_part_path("x/split.json", 2);
    assert_string_equal(second, "x/split.part2.json");
    free(second);
    size_t kernels = 0, named = 0;
    for (size_t i = 0; i < n; i++) {
        cJSON *doc = load_json(files[i]);   /* each part is valid on its own */
        cJSON *events = cJSON_GetObjectItem(doc, "traceEvents");
        kernels += count_cat(events, "X", "kernel");
        cJSON *ev;
        cJSON_ArrayForEach(ev, events)
            named += !strcmp(str_of(ev, "name"), "process_name");
        assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "otherData"), "part")->valueint,
                         (int)i + 1);
        cJSON_Delete(doc);
    }
    assert_int_equal(kernels, f->job->ranks[0].n_kernels + f->job->ranks[1].n_kernels);
    assert_int_equal(named, 2 * n);
    free_files(files, n);
}

static void test_step_window(void **state)
{
    fixture *f = *state;
    tsa_trace_options o;
    tsa_trace_default_options(&o);
    o.step_first = 1;
    o.step_last = 2;
    size_t n;
    char **files = export(f, &o, "window.json", &n);
    cJSON *doc = load_json(files[0]);
    cJSON *events = cJSON_GetObjectItem(doc, "traceEvents");
    assert_int_equal(count_cat(events, "X", "kernel"), 2 * 2 * 4);
    assert_int_equal(count_cat(events, "X", "step"), 2 * 2);
    int64_t origin = origin_of(doc);
    cJSON *ev;
    cJSON_ArrayForEach(ev, events) {
        if (strcmp(str_of(ev, "ph"), "X"))
            continue;
        int64_t pid = (int64_t)cJSON_GetObjectItem(ev, "pid")->valuedouble;
        const tsa_rank *r = &f->job->ranks[pid];
        int64_t ts = ns_of(ev, "ts") + origin - r->clock_offset_ns;
        assert_true(ts >= r->steps[1].start_ns && ts < r->steps[2].end_ns);
    }
    cJSON_Delete(doc);
    free_files(files, n);
}

static void test_unwritable(void **state)
{
    fixture *f = *state;
    char **files;
    size_t n;
    char err[256];
    assert_int_equal(tsa_trace_export(f->job, NULL, "/nonexistent/dir/x.json", &files, &n, err,
                                      sizeof err), -1);
    assert_non_null(strstr(err, "/nonexistent/dir/x.json"));
    free_files(files, n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_structure_and_timing),
        cmocka_unit_test(test_gzip),
        cmocka_unit_test(test_split_parts),
        cmocka_unit_test(test_step_window),
        cmocka_unit_test(test_unwritable),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
