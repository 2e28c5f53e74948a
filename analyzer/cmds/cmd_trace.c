/* `tscope-report trace DIR -o FILE`: the analysis runs first so the export
 * gets aligned clocks, steps and phases; then the job is written out. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_number.h"
#include "commands.h"
#include "model/analysis.h"
#include "load/job_load.h"
#include "report/trace_export.h"
#include "load/load_any.h"
#include "driver/analyze.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: tscope-report trace DIR -o FILE [options]\n"
            "  -o, --output FILE   Chrome trace / Perfetto JSON (FILE.gz: gzip; - stdout)\n"
            "  --steps A-B         only steps A..B (indices as the report numbers them,\n"
            "                      from 0, warm-up included); --steps A for one step\n"
            "  --max-mb N          split into parts of about N MB of JSON each\n"
            "                      (FILE, FILE.part2.json, ...)\n"
            "  --gzip              gzip whatever the name\n"
            "  --no-analysis       raw records only: own clocks, no steps or phases\n"
            "  --run-id ID         load this run instead of the largest\n"
            "exit status: 0 ok, 1 written but the input had problems, 2 error\n");
}

/* "A-B" or "A" into inclusive bounds. */
static int parse_steps(const char *s, long *a, long *b)
{
    char *end;
    long x = strtol(s, &end, 10);
    if (end == s || x < 0)
        return -1;
    long y = x;
    if (*end == '-') {
        const char *t = end + 1;
        y = strtol(t, &end, 10);
        if (end == t || y < x)
            return -1;
    }
    if (*end)
        return -1;
    *a = x;
    *b = y;
    return 0;
}

int tsa_cmd_trace(int argc, char **argv)
{
    enum { O_STEPS = 1000, O_MAXMB, O_GZIP, O_NOANALYSIS, O_RUN };
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"steps", required_argument, NULL, O_STEPS},
        {"max-mb", required_argument, NULL, O_MAXMB},
        {"gzip", no_argument, NULL, O_GZIP},
        {"no-analysis", no_argument, NULL, O_NOANALYSIS},
        {"run-id", required_argument, NULL, O_RUN},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    tsa_trace_options topt;
    tsa_trace_default_options(&topt);
    const char *output = NULL, *run_id = NULL;
    int analyze = 1, c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': output = optarg; break;
        case O_STEPS:
            if (parse_steps(optarg, &topt.step_first, &topt.step_last)) {
                fprintf(stderr, "tscope-report: bad --steps '%s' (want A-B)\n", optarg);
                return 2;
            }
            break;
        case O_MAXMB: {
            double mb;
            if (tsa_cli_double(optarg, &mb) || !(mb > 0 && mb < 1e7)) {
                fprintf(stderr, "tscope-report: bad --max-mb '%s'\n", optarg);
                return 2;
            }
            topt.max_bytes = (uint64_t)(mb * 1e6);
            break;
        }
        case O_GZIP: topt.gzip = 1; break;
        case O_NOANALYSIS: analyze = 0; break;
        case O_RUN: run_id = optarg; break;
        case 'h': usage(stdout); return 0;
        default:
            fprintf(stderr, "tscope-report: trace: unknown option %s\n", argv[optind - 1]);
            usage(stderr);
            return 2;
        }
    }
    if (optind != argc - 1 || !output) {
        fprintf(stderr, "tscope-report: trace: %s\n",
                !output ? "missing -o FILE" : "expected one job directory");
        usage(stderr);
        return 2;
    }
    if (!strcmp(output, "-") && topt.max_bytes) {
        fprintf(stderr, "tscope-report: trace: --max-mb needs a file name, not -\n");
        return 2;
    }
    tsa_job *job;
    char err[512];
    /* Not lean: the flows from host calls to kernels need every launch. */
    tsa_load_options lopt = {.run_id = run_id, .quiet = 1};
    if (tsa_views_load_job(argv[optind], &lopt, &job, err, sizeof err)) {
        fprintf(stderr, "tscope-report: %s\n", err);
        return 2;
    }
    tsa_analysis *a = NULL;
    if (analyze && !(a = tsa_analyze(job, NULL))) {
        fprintf(stderr, "tscope-report: out of memory during the analysis\n");
        tsa_job_free(job);
        return 2;
    }
    char **files;
    size_t n_files;
    if (a)
        topt.pipe = a->pipe;
    int rc = tsa_trace_export(job, &topt, output, &files, &n_files, err, sizeof err);
    if (rc)
        fprintf(stderr, "tscope-report: %s\n", err);
    else if (strcmp(output, "-"))
        for (size_t i = 0; i < n_files; i++)
            fprintf(stderr, "wrote %s\n", files[i]);
    for (size_t i = 0; i < n_files; i++)
        free(files[i]);
    free(files);
    int status = rc ? 2 : job->n_problems ? 1 : 0;
    if (job->n_problems)
        fprintf(stderr, "tscope-report: %zu problem(s) reading the input (see 'tscope-report info')\n",
                job->n_problems);
    tsa_analysis_free(a);
    tsa_job_free(job);
    return status;
}
