/* tscope-report: a command table.  `tscope-report DIR` is `report DIR`. */
#include <stdio.h>
#include <string.h>

#include "cmds/commands.h"
#include "load/bb_load.h"

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command;

static const command commands[] = {
    {"report", tsa_cmd_report, "analyze one job directory (default)"},
    {"info", tsa_cmd_info_any,
     "per-dump (or per-trace) metadata, counts, dropped events, problems"},
    {"dump", tsa_cmd_dump, "print every record (--json: one object per line)"},
    {"trace", tsa_cmd_trace, "write a Perfetto / Chrome trace of all ranks"},
    {"diff", tsa_cmd_diff, "compare two runs side by side"},
    {"batch", tsa_cmd_batch, "analyze many job directories, one row per job"},
    {"hang", tsa_cmd_hang, "hung job: the stuck collective, missing ranks, desyncs, early exits"},
    {"html", tsa_cmd_html, "one self-contained HTML page with charts (-o FILE)"},
    {"blackbox", tsa_cmd_blackbox,
     "black-box folder: step timeline, capture windows, --capture ID for one"},
    {"live", tsa_cmd_live,
     "running black-box job: job-level series for Prometheus (file, /metrics)"},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: tscope-report [COMMAND] DIR [options]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\n'tscope-report COMMAND --help' describes a command's options.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("tscope-report %s\n", TSC_VERSION);
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].run(argc - 1, argv + 1);
    /* Anything else is a directory (or option) for the default command;
     * a black-box folder holds summaries, not records: its own view. */
    if (argc == 2 && tsa_bb_is_folder(argv[1]))
        return tsa_cmd_blackbox(argc, argv);
    return tsa_cmd_report(argc, argv);
}
