/* `tscope-report html DIR -o FILE [report options]`: the report's HTML
 * format written to a file.  Everything but -o is the report command's
 * (same parser), so a page and a text report of one input agree. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "load/load_any.h"
#include "report_cli.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: tscope-report html DIR -o FILE [options]\n"
            "  -o, --output FILE   the page to write (- for stdout): one self-contained\n"
            "                      HTML file with inline SVG charts (docs/html.md)\n"
            "  DIR                 dumps of a job, or a torch.profiler trace directory\n"
            "  options             those of 'tscope-report report' (--warmup, --run-id,\n"
            "                      --peak-tflops, ...; see tscope-report report --help)\n"
            "exit status: 0 ok, 1 written but the input had problems, 2 error\n");
}

int tsa_cmd_html(int argc, char **argv)
{
    const char *output = NULL;
    /* The report's parser sees argv without -o FILE and with --html. */
    char **args = calloc((size_t)argc + 2, sizeof *args);
    if (!args) {
        fprintf(stderr, "tscope-report: out of memory\n");
        return 2;
    }
    int n = 0;
    args[n++] = argv[0];
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            free(args);
            return 0;
        }
        if (!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "tscope-report: html: %s needs a file name\n", argv[i]);
                free(args);
                return 2;
            }
            output = argv[++i];
        } else if (!strncmp(argv[i], "--output=", 9)) {
            output = argv[i] + 9;
        } else {
            args[n++] = argv[i];
        }
    }
    args[n++] = "--html";
    args[n] = NULL;
    int rc = 2;
    tsa_report_args ra;
    if (!output) {
        fprintf(stderr, "tscope-report: html: missing -o FILE\n");
        usage(stderr);
        goto done;
    }
    rc = tsa_report_parse("tscope-report html", n, args, &ra);
    if (rc >= 0)
        goto done;
    tsa_job *job = NULL;
    char err[512];
    if (tsa_views_load_job(ra.dir, &ra.lopt, &job, err, sizeof err)) {
        fprintf(stderr, "tscope-report: %s\n", err);
        rc = 2;
        goto done;
    }
    FILE *f = strcmp(output, "-") ? fopen(output, "w") : stdout;
    if (!f) {
        fprintf(stderr, "tscope-report: html: cannot write %s\n", output);
        tsa_job_free(job);
        rc = 2;
        goto done;
    }
    ra.out = f;
    rc = tsa_report_finish("tscope-report", job, &ra);
    if (f != stdout && fclose(f) && rc < 2) {
        fprintf(stderr, "tscope-report: html: error writing %s\n", output);
        rc = 2;
    } else if (f != stdout && rc < 2) {
        fprintf(stderr, "wrote %s\n", output);
    }
done:
    free(args);
    return rc;
}
