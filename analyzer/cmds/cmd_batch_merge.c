/* `tscope-report batch merge FILE... [--top N]`: the NDJSON outputs of
 * `batch --shard I/N` runs -> one NDJSON batch: the job rows in job order,
 * then the fleet view recomputed over all of them, as one unsharded run
 * would print it. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch/batch.h"
#include "cli_number.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: tscope-report batch merge FILE... [--top N] [--html PAGE]\n"
            "  FILE...   outputs of `batch --ndjson --shard I/N` ('-' reads stdin)\n"
            "  --top N   jobs listed by recoverable GPU-hours (default 10)\n"
            "  --html PAGE  also write the fleet view as an HTML page\n"
            "prints NDJSON: the job rows, then the fleet rows (docs/batch-schema.md)\n"
            "exit status: 0 all jobs ok, 1 some jobs failed or were partial, 2 error\n");
}

int tsa_cmd_batch_merge(int argc, char **argv)
{
    enum { O_TOP = 1000, O_HTML };
    static const struct option longopts[] = {
        {"top", required_argument, NULL, O_TOP},
        {"html", required_argument, NULL, O_HTML},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    long top = 10;
    int c;
    const char *html = NULL;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case O_TOP:
            if (tsa_cli_long(optarg, 0, 1000000, &top)) {
                fprintf(stderr, "tscope-report: bad --top '%s'\n", optarg);
                return 2;
            }
            break;
        case O_HTML: html = optarg; break;
        case 'h': usage(stdout); return 0;
        default:
            fprintf(stderr, "tscope-report: batch merge: unknown option %s\n", argv[optind - 1]);
            usage(stderr);
            return 2;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "tscope-report: batch merge: no file given\n");
        usage(stderr);
        return 2;
    }
    tsa_batch_row *rows;
    size_t n;
    char err[1024];
    if (tsa_batch_merge_read(argv + optind, (size_t)(argc - optind), &rows, &n, err, sizeof err)) {
        fprintf(stderr, "tscope-report: batch merge: %s\n", err);
        return 2;
    }
    tsa_batch_print(stdout, 2, rows, n, (size_t)top, 1);
    int rc = tsa_batch_exit_status(rows, n);
    if (html && tsa_batch_html_file(html, rows, n, (size_t)top))
        rc = 2;
    for (size_t i = 0; i < n; i++)
        tsa_batch_row_free(&rows[i]);
    free(rows);
    return rc;
}
