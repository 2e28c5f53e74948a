/* `tscope-report blackbox DIR [--every] [--capture ID [report options]]`:
 * a black-box folder (docs/blackbox.md).  Without --capture: the job's
 * step timeline from the per-step summaries and the list of capture
 * windows; with it: the full report of one window, which is an ordinary
 * job folder of one dump per rank. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "commands.h"
#include "load/bb_load.h"
#include "passes/bb_timeline.h"
#include "report/bb_text.h"

static void usage(FILE *out)
{
    fprintf(out, "usage: tscope-report blackbox DIR [--every] [--json]\n"
                 "       tscope-report blackbox DIR --capture ID [report options]\n"
                 "  DIR: TSCOPE_OUT of a job run with TSCOPE_MODE=blackbox\n"
                 "  --every       one timeline line per step (default: at most 40 rows)\n"
                 "  --json        the same as one JSON document\n"
                 "  --capture ID  the full report of window ID (folder DIR/capture-ID)\n");
}

/* The report of one window: `tscope-report DIR/capture-ID [options]`. */
static int report_window(const char *dir, const char *id, int argc, char **argv)
{
    if (strchr(id, '/') || !strcmp(id, "..") || !strcmp(id, ".")) {
        fprintf(stderr, "tscope-report: bad window id '%s'\n", id);
        return 2;
    }
    char path[8192];
    snprintf(path, sizeof path, "%s/capture-%s", dir, id);
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "tscope-report: no window '%s' in %s (tscope-report blackbox %s lists "
                        "them)\n", id, dir, dir);
        return 2;
    }
    char **args = calloc((size_t)argc + 3, sizeof *args);
    if (!args)
        return 2;
    int n = 0;
    args[n++] = "report";
    args[n++] = path;
    for (int i = 0; i < argc; i++)
        args[n++] = argv[i];
    int rc = tsa_cmd_report(n, args);
    free(args);
    return rc;
}

int tsa_cmd_blackbox(int argc, char **argv)
{
    const char *dir = NULL, *capture = NULL;
    int every = 0, json = 0, rest = argc;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--capture") && i + 1 < argc) {
            capture = argv[++i];
            rest = i + 1; /* what follows goes to the report */
            break;
        } else if (!strcmp(argv[i], "--every")) {
            every = 1;
        } else if (!strcmp(argv[i], "--json")) {
            json = 1;
        } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        } else if (argv[i][0] == '-' || dir) {
            usage(stderr);
            return 2;
        } else {
            dir = argv[i];
        }
    }
    if (capture && !dir && rest < argc && argv[rest][0] != '-')
        dir = argv[rest++]; /* --capture ID DIR */
    if (!dir) {
        usage(stderr);
        return 2;
    }
    if (capture)
        return report_window(dir, capture, argc - rest, argv + rest);
    tsa_bb_folder f;
    char err[512];
    if (tsa_bb_load(dir, &f, err, sizeof err) < 0) {
        fprintf(stderr, "tscope-report: %s\n", err);
        return 2;
    }
    tsa_bb_timeline t;
    int rc = tsa_bb_timeline_build(&f, every, &t);
    if (rc == 0 && json)
        rc = tsa_bb_print_json(stdout, dir, &f, &t);
    else if (rc == 0)
        tsa_bb_print(stdout, dir, &f, &t);
    if (rc < 0)
        fprintf(stderr, "tscope-report: out of memory\n");
    rc = rc < 0 ? 2 : f.problems ? 1 : 0;
    tsa_bb_timeline_free(&t);
    tsa_bb_free(&f);
    return rc;
}
