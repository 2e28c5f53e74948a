/* `tscope-report diff A B`: analyse both runs, print them side by side. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_number.h"
#include "commands.h"
#include "model/analysis.h"
#include "load/job_load.h"
#include "report/diff.h"
#include "report/diff_side.h"
#include "load/load_any.h"
#include "driver/analyze.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: tscope-report diff A B [options]\n"
            "  A, B           job directories (tscope dumps or torch.profiler traces)\n"
            "  --json         machine-readable (docs/views.md)\n"
            "  --html         one self-contained HTML page on stdout (docs/html.md)\n"
            "  --warmup N     steps to skip at the start of both runs\n"
            "  --peak-tflops X  peak TFLOP/s per GPU for both runs\n"
            "Times are ms per rank-step: a line's total over ranks and analysed steps,\n"
            "divided by both, so runs of different length and size compare.\n"
            "exit status: 0 ok, 1 compared but an input had problems, 2 error\n");
}

typedef struct run {
    tsa_job *job;
    tsa_analysis *analysis;
} run;

static int load_run(const char *dir, const tsa_analysis_options *opt, run *r)
{
    char err[512];
    r->job = NULL;
    r->analysis = NULL;
    if (tsa_views_load_job(dir, &tsa_views_summary_load, &r->job, err, sizeof err)) {
        fprintf(stderr, "tscope-report: %s\n", err);
        return -1;
    }
    if (!(r->analysis = tsa_analyze(r->job, opt))) {
        fprintf(stderr, "tscope-report: %s: out of memory during the analysis\n", dir);
        return -1;
    }
    return 0;
}

static void free_run(run *r)
{
    tsa_analysis_free(r->analysis);
    tsa_job_free(r->job);
}

int tsa_cmd_diff(int argc, char **argv)
{
    enum { O_JSON = 1000, O_WARMUP, O_PEAK, O_HTML };
    static const struct option longopts[] = {
        {"json", no_argument, NULL, O_JSON},
        {"html", no_argument, NULL, O_HTML},
        {"warmup", required_argument, NULL, O_WARMUP},
        {"peak-tflops", required_argument, NULL, O_PEAK},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    tsa_analysis_options opt;
    tsa_analysis_default_options(&opt);
    int json = 0, html = 0, c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case O_JSON: json = 1; html = 0; break;
        case O_HTML: html = 1; json = 0; break;
        case O_WARMUP: {
            long v;
            if (tsa_cli_long(optarg, 0, 1000000, &v)) {
                fprintf(stderr, "tscope-report: bad --warmup '%s'\n", optarg);
                return 2;
            }
            opt.warmup = (int)v;
            break;
        }
        case O_PEAK: {
            double v;
            if (tsa_cli_double(optarg, &v) || !(v > 0)) {
                fprintf(stderr, "tscope-report: bad --peak-tflops '%s'\n", optarg);
                return 2;
            }
            opt.peak_tflops = v;
            break;
        }
        case 'h': usage(stdout); return 0;
        default:
            fprintf(stderr, "tscope-report: diff: unknown option %s\n", argv[optind - 1]);
            usage(stderr);
            return 2;
        }
    }
    if (argc - optind != 2) {
        fprintf(stderr, "tscope-report: diff: expected two job directories\n");
        usage(stderr);
        return 2;
    }
    run a, b;
    memset(&b, 0, sizeof b);
    if (load_run(argv[optind], &opt, &a)) {
        free_run(&a);
        return 2;
    }
    if (load_run(argv[optind + 1], &opt, &b)) {
        free_run(&a);
        free_run(&b);
        return 2;
    }
    tsa_diff_side sa, sb;
    tsa_diff_side_from_analysis(a.analysis, argv[optind], &sa);
    tsa_diff_side_from_analysis(b.analysis, argv[optind + 1], &sb);
    tsa_diff d;
    int rc = 0;
    if (tsa_diff_compute(&sa, &sb, &d)) {
        fprintf(stderr, "tscope-report: out of memory\n");
        rc = 2;
    } else if (html) {
        tsa_diff_print_html(stdout, &sa, &sb, &d);
    } else if (json) {
        char *s = tsa_diff_json(&sa, &sb, &d);
        if (s) {
            puts(s);
            free(s);
        } else {
            fprintf(stderr, "tscope-report: out of memory\n");
            rc = 2;
        }
    } else
        tsa_diff_print_text(stdout, &sa, &sb, &d);
    tsa_diff_free(&d);
    if (!rc && (a.job->n_problems || b.job->n_problems)) {
        fprintf(stderr, "tscope-report: the inputs had problems (A: %zu, B: %zu); "
                        "see 'tscope-report info'\n",
                a.job->n_problems, b.job->n_problems);
        rc = 1;
    }
    free_run(&a);
    free_run(&b);
    return rc;
}
