/* `tscope-report [report] DIR [options]`: load, analyze, print.  The
 * parser and the printer are shared with tscope-report-mpi (report_cli.h). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/analysis.h"
#include "commands.h"
#include "load/job_load.h"
#include "passes/rank_stages.h"
#include "report_cli.h"
#include "load/load_any.h"
#include "driver/analyze.h"
#include "driver/stream.h"
#include "reader/text_visible.h"
#include "report/formats.h"

static void usage(FILE *out, const char *prog)
{
    fprintf(out, "usage: %s%s DIR [options]\n", prog,
            strcmp(prog, "tscope-report") ? "" : " [report]");
    for (size_t f = 1; f < tsa_report_n_formats; f++)
        fprintf(out, "  --%-21s%s\n", tsa_report_formats[f].name, tsa_report_formats[f].help);
    fprintf(out,
            "  --color WHEN           always | auto (default: on a terminal) | never\n"
            "  --warmup N             steps to skip at the start (default 2, fewer if short)\n"
            "  --step-marker NAME     range or kernel name that starts each step\n"
            "  --peak-tflops X        peak TFLOP/s per GPU (overrides the table)\n"
            "  --flops-per-step X     FLOPs of one step on one rank\n"
            "  --params N             model parameters, with --tokens-per-step: 6*N*T\n"
            "  --tokens-per-step T    tokens per step per rank (also gives tokens/s)\n"
            "  --samples-per-step B   samples per step per rank (gives samples/s)\n"
            "  --layers L --seq S --hidden H   add attention 12*L*S*H per token\n"
            "  --run-id ID            load this run instead of the largest\n"
            "  --window W             steps (default: analysed steps) | gpu-span (HTA's\n"
            "                         span, first to last GPU record; adds HTA's figures)\n"
            "  --jobs N               threads reading dumps or traces (default: the cores\n"
            "                         available)\n"
            "  --max-rank-mb M        refuse a dump over M MiB (default: a quarter of the\n"
            "                         memory, shared by the threads)\n"
            "  --in-memory            hold every rank's records at once (the old path;\n"
            "                         same output, memory about 1.6x the dumps)\n"
            "  --stream-above M       stream the dumps (or torch.profiler traces) when they\n"
            "                         exceed M MiB, else hold them (faster; default 256;\n"
            "                         0: always stream)\n"
            "exit status: 0 ok, 1 report produced but the dumps had problems,\n"
            "             2 usage error, missing directory or nothing readable\n");
}

static int parse_double(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !(v >= 0))
        return -1;
    *out = v;
    return 0;
}

static int parse_int(const char *s, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end || v < 0 || v > 1000000000)
        return -1;
    *out = (int)v;
    return 0;
}

int tsa_report_parse(const char *prog, int argc, char **argv, tsa_report_args *ra)
{
    enum { O_COLOR = 1000, O_WARMUP, O_MARKER, O_PEAK, O_FPS, O_PARAMS, O_TOKENS,
           O_LAYERS, O_SEQ, O_HIDDEN, O_RUN, O_SAMPLES, O_WINDOW, O_JOBS, O_MAXRANK,
           O_INMEM, O_STREAM };
    static const struct option fixed[] = {
        {"color", required_argument, NULL, O_COLOR},
        {"warmup", required_argument, NULL, O_WARMUP},
        {"step-marker", required_argument, NULL, O_MARKER},
        {"peak-tflops", required_argument, NULL, O_PEAK},
        {"flops-per-step", required_argument, NULL, O_FPS},
        {"params", required_argument, NULL, O_PARAMS},
        {"tokens-per-step", required_argument, NULL, O_TOKENS},
        {"samples-per-step", required_argument, NULL, O_SAMPLES},
        {"layers", required_argument, NULL, O_LAYERS},
        {"seq", required_argument, NULL, O_SEQ},
        {"hidden", required_argument, NULL, O_HIDDEN},
        {"run-id", required_argument, NULL, O_RUN},
        {"window", required_argument, NULL, O_WINDOW},
        {"jobs", required_argument, NULL, O_JOBS},
        {"max-rank-mb", required_argument, NULL, O_MAXRANK},
        {"in-memory", no_argument, NULL, O_INMEM},
        {"stream-above", required_argument, NULL, O_STREAM},
        {"help", no_argument, NULL, 'h'},
    };
    /* One option per report format but the default (formats.h), then these. */
    enum { O_FORMAT = 2000, N_FIXED = sizeof fixed / sizeof fixed[0], MAX_FORMATS = 16 };
    struct option longopts[MAX_FORMATS + N_FIXED + 1];
    size_t n_opts = 0;
    for (size_t f = 1; f < tsa_report_n_formats && f < MAX_FORMATS; f++)
        longopts[n_opts++] = (struct option){tsa_report_formats[f].name, no_argument, NULL,
                                             O_FORMAT + (int)f};
    memcpy(longopts + n_opts, fixed, sizeof fixed);
    n_opts += N_FIXED;
    longopts[n_opts] = (struct option){NULL, 0, NULL, 0};
    memset(ra, 0, sizeof *ra);
    tsa_analysis_options opt;
    tsa_analysis_default_options(&opt);
    tsa_load_options lopt = {0};
    int format = 0, color = -1, c, jobs = 0, in_memory = 0, max_rank_mb = 0;
    int stream_above_mb = TSA_STREAM_ABOVE_MB;
    optind = 1;
    opterr = 0;
    int li = -1;
    while ((c = getopt_long(argc, argv, "h", longopts, &li)) != -1) {
        int bad = 0;
        if (c >= O_FORMAT && c < O_FORMAT + MAX_FORMATS) {
            format = c - O_FORMAT;
            continue;
        }
        switch (c) {
        case O_COLOR:
            if (!strcmp(optarg, "always")) color = 1;
            else if (!strcmp(optarg, "never")) color = 0;
            else if (!strcmp(optarg, "auto")) color = -1;
            else bad = 1;
            break;
        case O_WARMUP: bad = parse_int(optarg, &opt.warmup); break;
        case O_MARKER: opt.step_marker = optarg; break;
        case O_PEAK: bad = parse_double(optarg, &opt.peak_tflops); break;
        case O_FPS: bad = parse_double(optarg, &opt.flops_per_step); break;
        case O_PARAMS: bad = parse_double(optarg, &opt.params); break;
        case O_TOKENS: bad = parse_double(optarg, &opt.tokens_per_step); break;
        case O_SAMPLES: bad = parse_double(optarg, &opt.samples_per_step); break;
        case O_LAYERS: bad = parse_int(optarg, &opt.layers); break;
        case O_SEQ: bad = parse_int(optarg, &opt.seq); break;
        case O_HIDDEN: bad = parse_int(optarg, &opt.hidden); break;
        case O_RUN: lopt.run_id = optarg; break;
        case O_WINDOW:
            if (!strcmp(optarg, "steps")) opt.window = TSA_WINDOW_STEPS;
            else if (!strcmp(optarg, "gpu-span")) opt.window = TSA_WINDOW_GPU_SPAN;
            else bad = 1;
            break;
        case O_JOBS: bad = parse_int(optarg, &jobs) || jobs < 1 || jobs > 1024; break;
        case O_MAXRANK: bad = parse_int(optarg, &max_rank_mb) || max_rank_mb < 1; break;
        case O_INMEM: in_memory = 1; break;
        case O_STREAM: bad = parse_int(optarg, &stream_above_mb); break;
        case 'h': usage(stdout, prog); return 0;
        default:
            fprintf(stderr, "%s: unknown option %s\n", prog, argv[optind - 1]);
            usage(stderr, prog);
            return 2;
        }
        if (bad) {
            /* li names the long option just parsed. */
            fprintf(stderr, "%s: bad value '%s' for --%s\n", prog, optarg,
                    li >= 0 ? longopts[li].name : "?");
            return 2;
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "%s: %s\n", prog,
                optind >= argc ? "missing job directory" : "expected one job directory");
        usage(stderr, prog);
        return 2;
    }
    if (color < 0) {
        const char *nc = getenv("NO_COLOR");
        color = isatty(fileno(stdout)) && !(nc && *nc);
    }
    lopt.quiet = 1;
    lopt.lean = 1;
    lopt.jobs = jobs;
    ra->opt = opt;
    ra->lopt = lopt;
    ra->format = format;
    ra->color = color;
    ra->dir = argv[optind];
    ra->runner = NULL;
    ra->jobs = jobs;
    ra->in_memory = in_memory;
    ra->max_rank_bytes = (unsigned long long)max_rank_mb << 20;
    ra->stream_above = (unsigned long long)stream_above_mb << 20;
    return -1;
}

int tsa_report_finish(const char *prog, tsa_job *job, const tsa_report_args *ra)
{
    tsa_analysis *a = tsa_analyze_with(job, &ra->opt, ra->runner ? ra->runner : &tsa_local_runner);
    if (!a) {
        fprintf(stderr, "%s: out of memory during the analysis\n", prog);
        tsa_job_free(job);
        return 2;
    }
    int rc = 0;
    const tsa_report_format *fmt = &tsa_report_formats[ra->format];
    if (fmt->write(ra->out ? ra->out : stdout, a, ra->color)) {
        fprintf(stderr, "%s: out of memory writing %s\n", prog, fmt->what);
        rc = 2;
    }
    if (rc == 0 && job->n_problems) {
        fprintf(stderr, "%s: %zu problem(s) reading the dumps:\n", prog, job->n_problems);
        for (size_t i = 0; i < job->n_problems && i < 20; i++)
            fprintf(stderr, "  %s: offset %llu: %s\n", job->problems[i].file,
                    (unsigned long long)job->problems[i].offset, job->problems[i].message);
        rc = 1;
    }
    tsa_analysis_free(a);
    tsa_job_free(job);
    return rc;
}

int tsa_cmd_report(int argc, char **argv)
{
    tsa_report_args ra;
    int rc = tsa_report_parse("tscope-report", argc, argv, &ra);
    if (rc >= 0)
        return rc;
    tsa_job *job = NULL;
    tsa_stream *st = NULL;
    char err[512];
    /* Dumps or torch.profiler traces stream (driver/stream.h) unless
     * --in-memory or small.  The HTML page's timeline chart reads its two
     * ranks again (the runner's hold). */
    int streamed = !ra.in_memory;
    tsa_stream_limits lim = {ra.jobs, ra.max_rank_bytes, ra.stream_above};
    if (streamed ? tsa_stream_load(ra.dir, &ra.lopt, ra.opt.step_marker, &lim, &job, &st, err,
                                   sizeof err) < 0
                 : tsa_views_load_job(ra.dir, &ra.lopt, &job, err, sizeof err)) {
        fprintf(stderr, "tscope-report: %s\n", streamed ? tsr_vis(err) : err);
        return 2;
    }
    if (streamed && !st) {  /* small enough to hold whole */
        if (tsa_views_load_job(ra.dir, &ra.lopt, &job, err, sizeof err)) {
            fprintf(stderr, "tscope-report: %s\n", err);
            return 2;
        }
    } else if (st && tsa_stream_needs_whole(job)) {
        tsa_job_free(job);
        tsa_stream_free(st);
        st = NULL;
        if (tsa_views_load_job(ra.dir, &ra.lopt, &job, err, sizeof err)) {
            fprintf(stderr, "tscope-report: %s\n", err);
            return 2;
        }
    }
    if (st)
        ra.runner = tsa_stream_runner(st);
    rc = tsa_report_finish("tscope-report", job, &ra);
    tsa_stream_free(st);
    return rc;
}
