/* The report command in two halves, so that another front end (the MPI
 * tool, analyzer/mpi) parses the same options and prints the same output:
 * tsa_report_parse reads the command line, tsa_report_finish analyses a
 * loaded job and prints it. */
#ifndef TSA_REPORT_CLI_H
#define TSA_REPORT_CLI_H

#include <stdio.h>

#include "model/analysis.h"
#include "load/job_load.h"

typedef struct tsa_report_args {
    tsa_analysis_options opt;
    tsa_load_options lopt;
    int format;               /* index into report/formats.h (0: text; --json: json) */
    int color;                /* resolved: 1 ANSI colors */
    const char *dir;          /* the job directory (borrowed from argv) */
    /* Who runs the per-rank stages (rank_stages.h); NULL: this process. */
    const struct tsa_rank_runner *runner;
    FILE *out;                /* where the report goes; NULL: stdout */
    /* tscope-report only (driver/stream.h): */
    int in_memory;            /* --in-memory: load every rank whole, then analyse */
    int jobs;                 /* --jobs N: threads loading ranks; 0 the cores available */
    unsigned long long max_rank_bytes; /* --max-rank-mb: larger dumps refused; 0 default */
    unsigned long long stream_above; /* --stream-above: dumps of at most this many
                                        bytes are held whole (faster) */
} tsa_report_args;

/* prog names the tool in messages.  Returns -1 when the report should run,
 * else the exit status to return (0 after --help, 2 on a usage error). */
int tsa_report_parse(const char *prog, int argc, char **argv, tsa_report_args *out);

/* Analyses `job`, prints the report in its format and the load problems,
 * frees the job.  Returns the command's exit status (0, 1 or 2). */
int tsa_report_finish(const char *prog, tsa_job *job, const tsa_report_args *ra);

#endif
