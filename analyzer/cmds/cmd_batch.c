/* `tscope-report batch DIR...`: find job directories (or this shard's
 * share of them), analyse them in parallel child processes, print one row
 * per job and the fleet view.  `batch merge` is in cmd_batch_merge.c. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "batch/batch.h"
#include "cli_number.h"
#include "commands.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: tscope-report batch DIR... [options]\n"
            "       tscope-report batch merge FILE... [--top N]   (shard outputs)\n"
            "  DIR...          searched recursively for job directories (*.tsd dumps\n"
            "                  or torch.profiler traces)\n"
            "  -j, --jobs N    analyses in parallel (default: all cores)\n"
            "  --csv           rows as CSV          (columns: docs/views.md)\n"
            "  --ndjson        rows as JSON lines, then the fleet view as typed lines\n"
            "  --top N         jobs listed by recoverable GPU-hours (default 10)\n"
            "  --html FILE     also write the fleet view as an HTML page (hosts named\n"
            "                  straggler across jobs with their causes; not with --shard)\n"
            "  --shard I/N     analyse only shard I (0..N-1) of the jobs, chosen by a\n"
            "                  hash of each job's real path; no fleet view (merge the\n"
            "                  shards' --ndjson outputs with `batch merge`)\n"
            "  --timeout S     give up on a job after S seconds (default 1800, 0 none)\n"
            "  --force         analyse every job even when its summary is up to date\n"
            "  --no-write      do not write %s summary files\n"
            "  -q, --quiet     no progress lines on stderr\n"
            "exit status: 0 all jobs ok, 1 some jobs failed or were partial, 2 error\n",
            TSA_BATCH_SUMMARY_FILE);
}

int tsa_cmd_batch(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "merge"))   /* a directory named merge: ./merge */
        return tsa_cmd_batch_merge(argc - 1, argv + 1);
    enum { O_CSV = 1000, O_NDJSON, O_TOP, O_TIMEOUT, O_FORCE, O_NOWRITE, O_SHARD, O_HTML };
    static const struct option longopts[] = {
        {"jobs", required_argument, NULL, 'j'},
        {"csv", no_argument, NULL, O_CSV},
        {"ndjson", no_argument, NULL, O_NDJSON},
        {"top", required_argument, NULL, O_TOP},
        {"timeout", required_argument, NULL, O_TIMEOUT},
        {"force", no_argument, NULL, O_FORCE},
        {"no-write", no_argument, NULL, O_NOWRITE},
        {"shard", required_argument, NULL, O_SHARD},
        {"html", required_argument, NULL, O_HTML},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    tsa_batch_options opt = {ncpu > 0 ? (int)ncpu : 1, 1800, 1, 1, 1};
    int format = 0;   /* 0 table, 1 csv, 2 ndjson */
    long top = 10, v;
    tsa_batch_shard shard = {0, 1};
    int sharded = 0, c;
    const char *html = NULL;
    char err[160];
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "j:qh", longopts, NULL)) != -1) {
        switch (c) {
        case 'j':
            if (tsa_cli_long(optarg, 1, 256, &v)) {
                fprintf(stderr, "tscope-report: bad -j '%s' (1..256)\n", optarg);
                return 2;
            }
            opt.parallel = (int)v;
            break;
        case O_CSV: format = 1; break;
        case O_NDJSON: format = 2; break;
        case O_TOP:
            if (tsa_cli_long(optarg, 0, 1000000, &top)) {
                fprintf(stderr, "tscope-report: bad --top '%s'\n", optarg);
                return 2;
            }
            break;
        case O_TIMEOUT:
            if (tsa_cli_long(optarg, 0, 86400 * 30, &v)) {
                fprintf(stderr, "tscope-report: bad --timeout '%s'\n", optarg);
                return 2;
            }
            opt.timeout_s = (double)v;
            break;
        case O_FORCE: opt.use_cache = 0; break;
        case O_NOWRITE: opt.write_cache = 0; break;
        case O_SHARD:
            if (tsa_batch_shard_parse(optarg, &shard, err, sizeof err)) {
                fprintf(stderr, "tscope-report: batch: %s\n", err);
                return 2;
            }
            sharded = 1;
            break;
        case O_HTML: html = optarg; break;
        case 'q': opt.progress = 0; break;
        case 'h': usage(stdout); return 0;
        default:
            fprintf(stderr, "tscope-report: batch: unknown option %s\n", argv[optind - 1]);
            usage(stderr);
            return 2;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "tscope-report: batch: no directory given\n");
        usage(stderr);
        return 2;
    }
    if (html && sharded) {
        fprintf(stderr, "tscope-report: batch: --html draws the whole fleet: merge the shards "
                        "first (batch merge ... --html FILE)\n");
        return 2;
    }
    char **jobs;
    size_t n;
    if (tsa_batch_find_jobs(argv + optind, (size_t)(argc - optind), &jobs, &n)) {
        fprintf(stderr, "tscope-report: batch: out of memory\n");
        return 2;
    }
    if (!n) {
        fprintf(stderr, "tscope-report: batch: no job directories found\n");
        free(jobs);
        return 2;
    }
    if (sharded) {
        size_t all = n;
        tsa_batch_shard_filter(&shard, jobs, &n);
        if (opt.progress)
            fprintf(stderr, "tscope-report: batch: shard %lu/%lu: %zu of %zu jobs\n",
                    shard.index, shard.count, n, all);
    }
    tsa_batch_row *rows = calloc(n ? n : 1, sizeof *rows);
    int rc = 2;
    if (rows && !tsa_batch_run(jobs, n, &opt, rows)) {
        /* a shard's fleet view would be partial: `batch merge` computes it */
        tsa_batch_print(stdout, format, rows, n, (size_t)top, !sharded);
        rc = tsa_batch_exit_status(rows, n);
        if (html && tsa_batch_html_file(html, rows, n, (size_t)top))
            rc = 2;
    } else
        fprintf(stderr, "tscope-report: batch failed\n");
    if (rows)
        for (size_t i = 0; i < n; i++)
            tsa_batch_row_free(&rows[i]);
    free(rows);
    for (size_t i = 0; i < n; i++)
        free(jobs[i]);
    free(jobs);
    return rc;
}
