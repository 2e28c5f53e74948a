/* The pipeline what-if on real timelines: three training jobs published
 * with a study of stragglers, converted to torch.profiler traces (origin,
 * conversion and expected numbers: tests/data/stragglers/SOURCE.md and
 * EXPECTED.md).  The traces are data brought in from outside: they live
 * beside the checkout in ../shared/corpus/stragglers (or
 * TSCOPE_STRAGGLER_CORPUS), and the tests skip without them.  The study's own
 * what-if names one slow worker (AR), a slow last stage (ST) and a spread
 * with the last stage worst (SE); tscope must name the same, with a
 * slowdown S near the study's, and no finding may claim more than the
 * job's wall time, alone or summed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "driver/analyze.h"
#include "load/job_build.h"
#include "load/load_any.h"
#include "report/report.h"
#include "report/trace_export.h"
#include "whatif/whatif.h"

typedef struct expect {
    const char *dir;
    tsa_pipe_class cls;
    int culprit_rank;      /* global rank (worker), stage (stage, spread), -1 */
    size_t stages, dp;
    double study_s;        /* the study's S over the same steps (EXPECTED.md) */
} expect;

static const char *corpus_dir(void)
{
    const char *dir = getenv("TSCOPE_STRAGGLER_CORPUS");
    return dir && *dir ? dir : WHATIF_DATA_DIR;
}

static void check(const expect *e)
{
    char path[4096], err[512];
    snprintf(path, sizeof path, "%s/%s", corpus_dir(), e->dir);
    if (access(path, R_OK) != 0) {
        fprintf(stderr, "no %s: skipped (see tests/data/stragglers/SOURCE.md)\n", path);
        skip();
    }
    tsa_job *job = NULL;
    assert_int_equal(tsa_views_load_job(path, NULL, &job, err, sizeof err), 0);
    if (getenv("WHATIF_GPU_ONLY"))   /* no host record at all: GPU records only */
        for (size_t i = 0; i < job->n_ranks; i++)
            assert_true(job->ranks[i].n_apis == 0 && job->ranks[i].n_kernels > 0);
    tsa_analysis_options opt;
    tsa_analysis_default_options(&opt);
    opt.warmup = 0;   /* the study's steps are sampled past warm-up */
    tsa_analysis *a = tsa_analyze(job, &opt);
    assert_non_null(a);
    const tsa_pipe_result *p = a->pipe;
    assert_non_null(p);
    assert_true(p->pipeline);
    assert_int_equal(p->n_stages, e->stages);
    assert_int_equal(p->n_dp, e->dp);
    assert_int_equal(p->cls, e->cls);
    if (e->cls == TSA_PIPE_SLOW_WORKER)
        assert_int_equal(p->global_rank[p->culprit], e->culprit_rank);
    else if (e->cls == TSA_PIPE_SPREAD)
        assert_int_equal(p->worst_stage, e->culprit_rank);
    else
        assert_int_equal(p->culprit, e->culprit_rank);
    /* S: the study replaces every operation by its type's mean over all
     * workers (faster ones too) and drops every launch gap; tscope takes
     * the median, never lengthens, and keeps gaps at their peers'.  The
     * two agree within 10% on these jobs. */
    printf("%s: S %.3f (study %.3f), class %s\n", e->dir, p->slowdown, e->study_s,
           tsa_pipe_class_id(p->cls));
    assert_true(fabs(p->slowdown / e->study_s - 1.0) <= 0.10);
    /* The study's recoverable share is 1 - 1/S: tscope's, every slow
     * operation fixed, of the recorded step time, within 5 points. */
    double study_share = 1.0 - 1.0 / e->study_s;
    double share = (double)(p->actual_ns - p->ideal_ns) / (double)p->recorded_ns;
    printf("%s: recoverable %.1f%% (study %.1f%%)\n", e->dir, 100 * share, 100 * study_share);
    assert_true(fabs(share - study_share) <= 0.05);
    /* One number per report: the verdict's headline share, the finding's
     * recoverable seconds and the what-if's saving of the blamed fix. */
    const tsa_finding *pf = NULL;
    for (size_t i = 0; i < a->findings.n; i++)
        if (!strcmp(a->findings.items[i].id, tsa_pipe_class_id(p->cls)))
            pf = &a->findings.items[i];
    assert_non_null(pf);
    assert_int_equal(a->verdict, TSA_VERDICT_STRAGGLER_BOUND);
    double finding_share = (double)pf->recoverable_ns / (double)a->wall_ns;
    double whatif_share = (double)tsa_pipe_blamed_ns(p) / (double)p->recorded_ns;
    char headline[32];
    snprintf(headline, sizeof headline, "cost %.1f%% of wall", 100 * finding_share);
    printf("%s: finding %.2f%%, what-if %.2f%%\n", e->dir, 100 * finding_share, 100 * whatif_share);
    assert_true(fabs(finding_share - whatif_share) <= 0.005);
    assert_non_null(strstr(a->verdict_reason, headline));
    assert_true(p->replay_error_ns <= 2000000);   /* the record replays to itself */
    /* savings per step never above the step, whichever fix */
    for (size_t i = 0; i < p->n_ranks; i++)
        assert_true(p->saved_worker_ns[i] <= p->actual_ns);
    for (size_t i = 0; i < p->n_stages; i++)
        assert_true(p->saved_stage_ns[i] <= p->actual_ns);
    for (size_t i = 0; i < p->n_dp; i++)
        assert_true(p->saved_dp_ns[i] <= p->actual_ns);
    for (int k = 0; k < TSA_OK_COUNT; k++)
        assert_true(p->saved_kind_ns[k] <= p->actual_ns);
    /* every finding, and all of them together, within the wall */
    int64_t sum = 0;
    for (size_t i = 0; i < a->findings.n; i++) {
        const tsa_finding *f = &a->findings.items[i];
        assert_true(f->recoverable_ns <= a->wall_ns);
        assert_true(strcmp(f->id, "DIST.STRAGGLER") && strcmp(f->id, "DIST.IMBALANCE"));
        sum += f->recoverable_ns;
    }
    assert_true(sum <= a->wall_ns);
    /* the critical paths become flow arrows in the Perfetto export */
    tsa_trace_options topt;
    tsa_trace_default_options(&topt);
    topt.pipe = p;
    char out[] = "/tmp/tsc_whatif_trace_XXXXXX";
    int fd = mkstemp(out);
    assert_true(fd >= 0);
    close(fd);
    char **files;
    size_t n_files;
    assert_int_equal(tsa_trace_export(job, &topt, out, &files, &n_files, err, sizeof err), 0);
    for (size_t i = 0; i < n_files; i++)
        free(files[i]);
    free(files);
    FILE *f = fopen(out, "r");
    assert_non_null(f);
    size_t flows = 0, hops = p->hop_first[p->steps] - p->steps;
    char line[1024];
    while (fgets(line, sizeof line, f))
        flows += strstr(line, "\"critical_path\"") != NULL;
    fclose(f);
    unlink(out);
    assert_int_equal(flows, 2 * hops);   /* one start and one end per link of each path */
    tsa_analysis_free(a);
    tsa_job_free(job);
}

static void ar_one_slow_worker(void **s)
{
    (void)s;
    expect e = {"AR", TSA_PIPE_SLOW_WORKER, 0, 4, 4, 1.953};
    check(&e);
}

static void st_slow_last_stage(void **s)
{
    (void)s;
    expect e = {"ST", TSA_PIPE_SLOW_STAGE, 3, 4, 2, 1.179};
    check(&e);
}

static void se_spread(void **s)
{
    (void)s;
    expect e = {"SE", TSA_PIPE_SPREAD, 1, 2, 32, 1.556};
    check(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ar_one_slow_worker),
        cmocka_unit_test(st_slow_last_stage),
        cmocka_unit_test(se_spread),
    };
    /* Without the study's traces nothing here can run: say so to meson
     * (77: skipped) rather than pass. */
    if (access(corpus_dir(), R_OK) != 0) {
        fprintf(stderr, "no %s: every check skipped (see tests/data/stragglers/SOURCE.md)\n",
                corpus_dir());
        return 77;
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
