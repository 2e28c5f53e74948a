/* Verdicts from evidence only (issue 38): on traces that show each case,
 * the figure the trace supports or "unknown", never a guess.  Each test
 * reads what it needs from the trace's own JSON (cJSON, independently of
 * the analyzer's loader) and compares the analysis with it.
 *
 * Traces: tests/data/evidence/<case> (scripts/write-evidence-traces.py
 * says how they were made) and, where a public trace shows the case,
 * ../shared/corpus/public/<name> (skipped, saying so, when absent). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "batch/batch.h"
#include "driver/analyze.h"
#include "load/job_build.h"
#include "load/kineto_load.h"
#include "passes/idle_cause.h"
#include "report/diff.h"
#include "report/diff_side.h"
#include "report/formats.h"
#include "report/idle_report.h"
#include "report/report.h"
#include "test_util.h"
#include "trace_analysis.h"

#ifndef EVIDENCE_DIR
#define EVIDENCE_DIR "tests/data/evidence"
#endif
#ifndef PUBLIC_CORPUS
#define PUBLIC_CORPUS "../shared/corpus/public"
#endif

typedef struct loaded {
    tsa_job *job;
    tsa_analysis *a;
    cJSON *trace;   /* the folder's first trace, parsed by cJSON */
} loaded;

/* The first trace file of dir, parsed; NULL when there is none. */
static cJSON *first_trace(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return NULL;
    char best[1024] = "";
    for (struct dirent *e; (e = readdir(d));)
        if (strstr(e->d_name, ".json") && (!best[0] || strcmp(e->d_name, best) < 0))
            snprintf(best, sizeof best, "%s", e->d_name);
    closedir(d);
    if (!best[0])
        return NULL;
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", dir, best);
    size_t len;
    char *text = tu_read_file(path, &len);
    cJSON *j = text ? cJSON_Parse(text) : NULL;
    free(text);
    return j;
}

static int load_dir(const char *dir, loaded *l)
{
    memset(l, 0, sizeof *l);
    if (tsa_kineto_dir(dir) <= 0)
        return 0;
    l->a = tu_analyze_traces(dir, &l->job);
    l->trace = first_trace(dir);
    assert_non_null(l->trace);
    return 1;
}

static void load_case(const char *name, loaded *l)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/%s", EVIDENCE_DIR, name);
    assert_true(load_dir(dir, l));
}

static int load_public(const char *name, loaded *l)
{
    const char *env = getenv("TSCOPE_PUBLIC_CORPUS");
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/%s", env ? env : PUBLIC_CORPUS, name);
    if (load_dir(dir, l))
        return 1;
    print_message("public trace %s absent (%s): skipped\n", name, dir);
    return 0;
}

static void done(loaded *l)
{
    tsa_analysis_free(l->a);
    tsa_job_free(l->job);
    cJSON_Delete(l->trace);
}

static const tsa_finding *finding(const tsa_analysis *a, const char *id)
{
    for (size_t i = 0; i < a->findings.n; i++)
        if (!strcmp(a->findings.items[i].id, id))
            return &a->findings.items[i];
    return NULL;
}

/* ------------------------------------------------- reading the trace */

static cJSON *events(const cJSON *trace)
{
    return cJSON_IsArray(trace) ? (cJSON *)trace : cJSON_GetObjectItem(trace, "traceEvents");
}

static const char *ev_str(const cJSON *e, const char *key)
{
    const cJSON *v = cJSON_GetObjectItem(e, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

static double ev_num(const cJSON *e, const char *key)
{
    const cJSON *v = cJSON_GetObjectItem(e, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static int is_gpu_work(const cJSON *e)
{
    const char *c = ev_str(e, "cat");
    return !strcmp(c, "kernel") || !strcmp(c, "gpu_memcpy") || !strcmp(c, "gpu_memset");
}

static size_t count_named(const cJSON *trace, const char *cat, const char *needle)
{
    size_t n = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, events(trace))
        n += (!cat || !strcmp(ev_str(e, "cat"), cat)) && strstr(ev_str(e, "name"), needle);
    return n;
}

/* ProfilerStep annotations of the host, sorted by start (us). */
static size_t profiler_steps(const cJSON *trace, double *ts, double *dur, size_t cap)
{
    size_t n = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, events(trace))
        if (!strcmp(ev_str(e, "cat"), "user_annotation") &&
            !strncmp(ev_str(e, "name"), "ProfilerStep#", 13) && n < cap) {
            ts[n] = ev_num(e, "ts");
            dur[n++] = ev_num(e, "dur");
        }
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && ts[j] < ts[j - 1]; j--) {
            double t = ts[j]; ts[j] = ts[j - 1]; ts[j - 1] = t;
            t = dur[j]; dur[j] = dur[j - 1]; dur[j - 1] = t;
        }
    return n;
}

/* The earliest GPU record starting at or after t (us). */
static double first_gpu_after(const cJSON *trace, double t)
{
    double best = INFINITY;
    const cJSON *e;
    cJSON_ArrayForEach(e, events(trace))
        if (is_gpu_work(e) && ev_num(e, "ts") >= t && ev_num(e, "ts") < best)
            best = ev_num(e, "ts");
    return best;
}

/* --------------------------------------------------------- item 1 */

/* A BERT inference step with no DataLoader (TraceLens's H100 trace): the
 * GPU idle between the ProfilerStep's start and its first kernel is the
 * host running the model's Python and CPU operators.  It was a 10.4% data
 * stall with DataLoader advice; it is host idle now. */
static void test_no_loader_no_stall_bert(void **state)
{
    (void)state;
    loaded l;
    if (!load_public("tracelens_h100_bert_small", &l))
        skip();
    assert_int_equal(count_named(l.trace, NULL, "DataLoader"), 0);
    double ts[4], dur[4];
    assert_int_equal(profiler_steps(l.trace, ts, dur, 4), 1);
    double gap_ns = (first_gpu_after(l.trace, ts[0]) - ts[0]) * 1e3;
    assert_true(gap_ns > 400e3); /* 458.5 us in the trace */
    const tsa_budget *b = &l.a->budget;
    assert_int_equal(b->line_ns[TSA_BL_DATA_STALL], 0);
    assert_int_equal(l.a->idle_ns[TSA_IDLE_DATA_START], 0);
    assert_null(finding(l.a, "DATA.STALL"));
    /* the gap is GPU idle explained by the host, or traced as nothing */
    assert_true((double)(b->line_ns[TSA_BL_HOST_IDLE] + b->line_ns[TSA_BL_OTHER]) >= gap_ns);
    assert_int_equal(l.a->verdict, TSA_VERDICT_HOST_BOUND);
    done(&l);
}

/* The control: param's DLRM rank waits in its DataLoader at the step's
 * start, so that wait stays a data stall. */
static void test_loader_keeps_stall_dlrm(void **state)
{
    (void)state;
    loaded l;
    if (!load_public("param_dlrm_8rank", &l))
        skip();
    assert_true(count_named(l.trace, "user_annotation", "DataLoader") > 0);
    assert_true(l.a->budget.line_ns[TSA_BL_DATA_STALL] > 0);
    assert_true(l.a->idle_ns[TSA_IDLE_DATA_LOADER] > 0);
    done(&l);
}

/* A transformer layer in a loop, no DataLoader: each ProfilerStep opens
 * with Python and CPU operators; no step is a data stall, the gaps are
 * host idle (CPU operators) and untraced time. */
static void test_no_loader_no_stall_loop(void **state)
{
    (void)state;
    loaded l;
    load_case("loop_no_loader", &l);
    assert_int_equal(count_named(l.trace, NULL, "DataLoader"), 0);
    double ts[16], dur[16];
    size_t n = profiler_steps(l.trace, ts, dur, 16);
    assert_int_equal(n, 6);
    assert_int_equal(l.a->steps_total, n);
    /* the analysed steps' start gaps, from the trace */
    double gaps = 0;
    for (size_t i = (size_t)l.a->warmup; i < n; i++)
        gaps += (first_gpu_after(l.trace, ts[i]) - ts[i]) * 1e3;
    const tsa_budget *b = &l.a->budget;
    assert_int_equal(b->line_ns[TSA_BL_DATA_STALL], 0);
    assert_null(finding(l.a, "DATA.STALL"));
    assert_true(l.a->idle_ns[TSA_IDLE_CPU_OP] > 0);
    /* the python_function spans around the operators: Python, not "nothing traced" */
    assert_true(l.a->idle_ns[TSA_IDLE_PYTHON] > 0);
    assert_true((double)(b->line_ns[TSA_BL_HOST_IDLE] + b->line_ns[TSA_BL_OTHER]) >= gaps);
    done(&l);
}

/* --------------------------------------------------------- item 2 */

/* A PCIe copy benchmark: copies and no kernel.  The rank has GPU records,
 * the memcpy line is the copies' time, the verdict copy-bound, with the
 * pageable and transfer findings. */
static void test_copy_only_is_copy_bound(void **state)
{
    (void)state;
    loaded l;
    load_case("copy_only_pcie", &l);
    assert_int_equal(count_named(l.trace, "kernel", ""), 0);
    double ts[16], dur[16];
    size_t n = profiler_steps(l.trace, ts, dur, 16);
    assert_int_equal(l.a->steps_total, n);
    /* copy time inside the analysed steps, from the trace (the copies do
     * not overlap one another) */
    double w0 = ts[l.a->warmup], w1 = ts[n - 1] + dur[n - 1], copy_us = 0, h2d = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, events(l.trace))
        if (!strcmp(ev_str(e, "cat"), "gpu_memcpy") && ev_num(e, "ts") >= w0 &&
            ev_num(e, "ts") < w1) {
            copy_us += ev_num(e, "dur");
            h2d += !!strstr(ev_str(e, "name"), "HtoD");
        }
    assert_true(copy_us > 0);
    assert_true(l.a->gpu);
    assert_false(l.a->cpu_only);
    assert_true(tsa_line_measured(l.a, TSA_BL_COPY));
    assert_int_equal(l.a->budget.line_ns[TSA_BL_COPY], (int64_t)llround(copy_us * 1e3));
    assert_int_equal(l.a->verdict, TSA_VERDICT_COPY_BOUND);
    assert_non_null(strstr(l.a->verdict_reason, "host-device transfer"));
    const tsa_finding *pg = finding(l.a, "MEM.PAGEABLE");
    assert_non_null(pg);
    assert_non_null(finding(l.a, "MEM.COPIES"));
    const tsa_finding *x = finding(l.a, "MEM.TRANSFER");
    assert_non_null(x);
    assert_non_null(strstr(x->title, "serialised"));
    assert_non_null(strstr(x->title, "not recorded"));
    assert_int_equal((int)h2d, 6);
    done(&l);
}

/* --------------------------------------------------------- item 3 */

/* One cold forward pass of a tensor-parallel model: each of its 9 layers
 * all-reduces the same 4 MiB, then one long all-gather.  Nothing repeats
 * like a loop (no ProfilerStep; the "cycles" are layers, and the
 * all-gather lies outside them): no steps, the window is the run's GPU
 * work, the all-gather inside it, the start-up said apart. */
static void test_one_forward_has_no_steps(void **state)
{
    (void)state;
    loaded l;
    load_case("tp_cold_forward", &l);
    double ts[4], dur[4];
    assert_int_equal(profiler_steps(l.trace, ts, dur, 4), 0);
    assert_int_equal(count_named(l.trace, "kernel", "ncclDevKernel_AllReduce"), 9);
    double first = INFINITY, last = 0, first_any = INFINITY, gather = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, events(l.trace)) {
        double t = ev_num(e, "ts"), d = ev_num(e, "dur");
        if (isnan(t) || !strcmp(ev_str(e, "ph"), "M"))
            continue;
        first_any = t < first_any ? t : first_any;
        if (!is_gpu_work(e))
            continue;
        first = t < first ? t : first;
        last = t + d > last ? t + d : last;
        if (strstr(ev_str(e, "name"), "AllGather"))
            gather = d;
    }
    assert_int_equal(l.a->method, TSA_STEPS_NONE);
    assert_int_equal(l.a->wall_ns, (int64_t)llround((last - first) * 1e3));
    assert_true((double)l.a->wall_ns > gather * 1e3);
    assert_true(isnan(l.a->throughput.steps_per_s));
    /* JSON: no step statistics, the start-up in its own field */
    char *json = tsa_report_json(l.a);
    assert_non_null(json);
    cJSON *j = cJSON_Parse(json);
    free(json);
    cJSON *tp = cJSON_GetObjectItem(j, "throughput");
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(tp, "step_p50_ns")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(tp, "step_p95_ns")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(tp, "step_p99_ns")));
    cJSON *sd = cJSON_GetObjectItem(j, "step_detection");
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(sd, "median_step_ns")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(sd, "cv")));
    assert_true(fabs(cJSON_GetObjectItem(sd, "startup_ns")->valuedouble -
                     (first - first_any) * 1e3) < 1);
    cJSON_Delete(j);
    done(&l);
}

/* Text written into a memory stream by fn, malloc'd. */
static char *captured(void (*fn)(FILE *, void *), void *arg)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    fn(f, arg);
    fclose(f);
    return buf;
}

typedef struct diff_pair {
    tsa_diff_side a, b;
    tsa_diff d;
} diff_pair;

static void diff_text(FILE *f, void *arg)
{
    diff_pair *p = arg;
    tsa_diff_print_text(f, &p->a, &p->b, &p->d);
}

static void diff_html(FILE *f, void *arg)
{
    diff_pair *p = arg;
    tsa_diff_print_html(f, &p->a, &p->b, &p->d);
}

static void report_html(FILE *f, void *arg)
{
    assert_int_equal(tsa_report_write_html(f, arg, 0), 0);
}

/* The other outputs of a run without steps (the cold forward pass, no
 * ProfilerStep) show no step figure: the batch row's step count and
 * median step, the diff's median step and speed-up, the HTML header's
 * step count; beside it a run with steps (the loop, 6 ProfilerSteps)
 * keeps its own. */
static void test_no_steps_in_batch_diff_html(void **state)
{
    (void)state;
    loaded cold, loop;
    load_case("tp_cold_forward", &cold);
    load_case("loop_no_loader", &loop);
    double ts[8], dur[8];
    assert_int_equal(profiler_steps(cold.trace, ts, dur, 8), 0);
    size_t loop_steps = profiler_steps(loop.trace, ts, dur, 8);
    assert_true(loop_steps >= 2);

    tsa_batch_row row;
    tsa_batch_row_init(&row, EVIDENCE_DIR "/tp_cold_forward");
    tsa_batch_analyze_job(EVIDENCE_DIR "/tp_cold_forward", &row);
    assert_string_equal(row.status, "ok");
    assert_int_equal(row.steps, 0);
    assert_true(isnan(row.median_step_s));
    char *rj = tsa_batch_row_json_text(&row);
    assert_non_null(rj);
    cJSON *rjo = cJSON_Parse(rj);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(rjo, "median_step_s")));
    cJSON_Delete(rjo);
    free(rj);
    tsa_batch_row_free(&row);

    diff_pair p;
    tsa_diff_side_from_analysis(cold.a, "cold", &p.a);
    tsa_diff_side_from_analysis(loop.a, "loop", &p.b);
    assert_int_equal(tsa_diff_compute(&p.a, &p.b, &p.d), 0);
    assert_true(isnan(p.d.rows[0].a)); /* median step time */
    assert_false(isnan(p.d.rows[0].b));
    assert_true(isnan(p.d.speedup));
    char *dj = tsa_diff_json(&p.a, &p.b, &p.d);
    cJSON *djo = cJSON_Parse(dj);
    cJSON *ja = cJSON_GetObjectItem(djo, "a"), *jb = cJSON_GetObjectItem(djo, "b");
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(ja, "median_step_ms")));
    assert_int_equal(cJSON_GetObjectItem(ja, "steps")->valueint, 0);
    assert_true(cJSON_IsNumber(cJSON_GetObjectItem(jb, "median_step_ms")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(djo, "speedup")));
    cJSON_Delete(djo);
    free(dj);
    char *dt = captured(diff_text, &p);
    assert_non_null(strstr(dt, "A: cold  (1 ranks, 1 hosts, no steps,"));
    assert_null(strstr(dt, "1 steps analysed"));
    free(dt);
    char *dh = captured(diff_html, &p);
    assert_non_null(strstr(dh, "A: cold (1 ranks, no steps,"));
    free(dh);
    tsa_diff_free(&p.d);

    char *h = captured(report_html, cold.a);
    assert_non_null(strstr(h, "no steps (nothing repeats as a step); median step unknown"));
    assert_null(strstr(h, "steps analysed"));
    free(h);
    h = captured(report_html, loop.a);
    char want[64];
    snprintf(want, sizeof want, "%zu steps analysed", loop.a->steps);
    assert_non_null(strstr(h, want));
    free(h);
    done(&cold);
    done(&loop);
}

/* --------------------------------------------------------- item 4 */

/* The device named in deviceProperties gets its own model's peak. */
static void test_peaks_by_exact_model(void **state)
{
    (void)state;
    static const struct {
        const char *name, *entry;
        double bf16;
    } want[] = {{"copy_only_pcie", "RTX A4000", 76.7e12}, {"tp_cold_forward", "H100 NVL", 835.5e12}};
    for (size_t i = 0; i < 2; i++) {
        loaded l;
        load_case(want[i].name, &l);
        const cJSON *dp = cJSON_GetArrayItem(cJSON_GetObjectItem(l.trace, "deviceProperties"), 0);
        assert_string_equal(l.a->device_name, ev_str(dp, "name"));
        assert_string_equal(l.a->peak_source, want[i].entry);
        assert_true(l.a->peak_flops == want[i].bf16);
        done(&l);
    }
}

/* --------------------------------------------------------- item 6 */

/* Plain fp32 GEMMs on GPUs the peak table does not hold: the advice rests
 * on the compute capability in the trace's deviceProperties (TF32 and bf16
 * from 8.0, fp16 tensor cores only on 7.x), and is conditional where the
 * trace records none.  Before: TF32 advice for all three, Turing's
 * included ("if it has tensor cores, TF32/bf16 are faster"). */
static void test_fp32_advice_by_capability(void **state)
{
    (void)state;
    static const char *const cases[] = {"fp32_turing", "fp32_ampere", "fp32_no_capability"};
    for (size_t i = 0; i < 3; i++) {
        loaded l;
        load_case(cases[i], &l);
        const cJSON *dp = cJSON_GetArrayItem(cJSON_GetObjectItem(l.trace, "deviceProperties"), 0);
        const cJSON *major = cJSON_GetObjectItem(dp, "computeMajor");
        const cJSON *minor = cJSON_GetObjectItem(dp, "computeMinor");
        assert_string_equal(l.a->device_name, ev_str(dp, "name"));
        assert_true(l.a->peak_flops == 0); /* not in the peak table */
        assert_true(count_named(l.trace, "kernel", "sgemm") > 0);
        const tsa_finding *f = finding(l.a, "EFF.FP32_GEMM");
        assert_non_null(f);
        int tf32 = strstr(f->fix, "set_float32_matmul_precision") != NULL;
        int fp16 = strstr(f->fix, "dtype=torch.float16") != NULL;
        char cc[16];
        if (!cJSON_IsNumber(major)) {
            /* nothing recorded: both, said as conditional */
            assert_true(tf32 && fp16);
            assert_non_null(strstr(f->fix, "If this GPU has tensor cores"));
            assert_non_null(strstr(f->title, "unknown"));
        } else {
            snprintf(cc, sizeof cc, "%d.%d", major->valueint, minor->valueint);
            assert_non_null(strstr(f->title, cc));
            assert_int_equal(tf32, major->valueint >= 8);
            assert_int_equal(fp16, major->valueint == 7);
            assert_null(strstr(f->fix, "If this GPU"));
        }
        done(&l);
    }
}

/* --------------------------------------------------------- item 5 */

/* A 0-us memset has no bandwidth: null, not 0. */
static void test_zero_time_copy_has_no_bandwidth(void **state)
{
    (void)state;
    loaded l;
    load_case("loop_no_loader", &l);
    size_t zero = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, events(l.trace))
        zero += !strcmp(ev_str(e, "cat"), "gpu_memset") && ev_num(e, "dur") == 0;
    assert_int_equal(zero, 1);
    int seen = 0;
    for (size_t i = 0; i < l.a->n_copies; i++)
        if (l.a->copies[i].dir == TSA_COPY_MEMSET) {
            seen = 1;
            assert_int_equal(l.a->copies[i].ns, 0);
            assert_true(isnan(l.a->copies[i].gbps));
        }
    assert_true(seen);
    char *json = tsa_report_json(l.a);
    assert_non_null(json);
    assert_non_null(strstr(json, "\"direction\":\t\"memset\""));
    assert_null(strstr(json, "\"gbps\":\t0,"));
    free(json);
    done(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_loader_no_stall_bert),
        cmocka_unit_test(test_loader_keeps_stall_dlrm),
        cmocka_unit_test(test_no_loader_no_stall_loop),
        cmocka_unit_test(test_copy_only_is_copy_bound),
        cmocka_unit_test(test_one_forward_has_no_steps),
        cmocka_unit_test(test_no_steps_in_batch_diff_html),
        cmocka_unit_test(test_peaks_by_exact_model),
        cmocka_unit_test(test_fp32_advice_by_capability),
        cmocka_unit_test(test_zero_time_copy_has_no_bandwidth),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
