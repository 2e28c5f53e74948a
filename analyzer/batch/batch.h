/* Batch analysis of many jobs: one row per job directory.  The row's
 * columns are a stable interface (docs/views.md); add new ones at the end. */
#ifndef TSA_BATCH_H
#define TSA_BATCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define TSA_BATCH_SUMMARY_FILE ".tscope-summary.json"
#define TSA_BATCH_SUMMARY_SCHEMA 3   /* 2: verdict, confidence, lead finding; 3: no step
                                      * count or time without steps (issue 38) */
/* The NDJSON rows' schema (docs/batch-schema.md): every row carries it as
 * "schema_version".  Bump it when a field changes meaning or type or goes
 * away; adding a field does not. */
#define TSA_BATCH_NDJSON_SCHEMA 1

typedef struct tsa_batch_row {
    char *job;                  /* job directory as found */
    char *run_id;               /* NULL unknown */
    char status[12];            /* ok, partial, failed, timeout, crashed */
    char *error;                /* why failed/partial, NULL none */
    long ranks, hosts, steps;   /* -1 unknown */
    double median_step_s;       /* NAN unknown */
    double mfu;                 /* NAN unknown */
    /* What the report itself concludes, so a fleet row never reads
     * differently from the job's report (budget lines alone would call a
     * straggler's victims' waiting "exposed_comm_wait"). */
    char *verdict;              /* "straggler-bound", ... NULL unknown */
    char *confidence;           /* "high", "medium", "low", NULL unknown */
    char *lead_finding;         /* id of the report's first finding, NULL none */
    double lead_finding_s;      /* its recoverable wall seconds, counted once */
    char *top_recoverable;      /* budget line name, NULL none */
    double top_recoverable_s;   /* that line per rank: wall seconds it could win back */
    double exposed_comm_share, data_stall_share;   /* NAN unknown */
    long straggler_rank;        /* -1 none */
    char *straggler_host;       /* NULL none */
    double recoverable_gpu_hours;   /* all recoverable lines, summed over GPUs */
    long problems;              /* input problems met while loading */
    int cached;                 /* 1: taken from an up-to-date summary file */
    char *straggler_cause;      /* the cause pass's first cause of the straggler
                                 * ("device", ... or "unknown"), NULL no straggler */
    char *slow_host;            /* the host DIST.SLOW_HOST names, NULL none */
    char *slow_host_cause;      /* the cause pass's first cause of that host, as above */
} tsa_batch_row;

void tsa_batch_row_init(tsa_batch_row *r, const char *job);
void tsa_batch_row_free(tsa_batch_row *r);
void tsa_batch_row_fail(tsa_batch_row *r, const char *status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Analyse one job directory in this process (the batch runs it in a child). */
void tsa_batch_analyze_job(const char *dir, tsa_batch_row *row);

/* Row <-> one-line JSON object with the documented keys (a cJSON * as void *). */
void *tsa_batch_row_to_json(const tsa_batch_row *r);
char *tsa_batch_row_json_text(const tsa_batch_row *r);   /* one line, malloc'd */
int tsa_batch_row_from_json(const void *cjson, const char *job, tsa_batch_row *r);

/* Output formats. */
void tsa_batch_print_table(FILE *out, const tsa_batch_row *rows, size_t n);
void tsa_batch_print_csv(FILE *out, const tsa_batch_row *rows, size_t n);
void tsa_batch_print_ndjson(FILE *out, const tsa_batch_row *rows, size_t n);
/* Fleet view: hosts that were the straggler or the slow host in more than
 * one job (with each job's cause), and jobs
 * by recoverable GPU-hours (top `top`). */
void tsa_batch_print_fleet(FILE *out, const tsa_batch_row *rows, size_t n, size_t top);
void tsa_batch_print_fleet_ndjson(FILE *out, const tsa_batch_row *rows, size_t n, size_t top);

/* Hosts blamed (straggler or slow host) in at least min_jobs jobs, most jobs first (then
 * by name); *out malloc'd (host strings borrowed from rows), NULL with 0
 * when out of memory. */
typedef struct tsa_batch_host {
    const char *host;
    size_t jobs;
} tsa_batch_host;
size_t tsa_batch_blamed_hosts(const tsa_batch_row *rows, size_t n, size_t min_jobs,
                              tsa_batch_host **out);
/* 1 when row r blames `host`: its straggler's host or its slow host. */
int tsa_batch_row_blames(const tsa_batch_row *r, const char *host);
/* The host row r blames (its straggler's, else its slow host), NULL none,
 * and the cause the cause pass gave it (NULL none recorded). */
const char *tsa_batch_row_blamed_host(const tsa_batch_row *r);
const char *tsa_batch_row_blamed_cause(const tsa_batch_row *r);
/* Indices of the rows with a known recoverable figure, most GPU-hours
 * first (then by job); *out malloc'd. */
size_t tsa_batch_ranked_jobs(const tsa_batch_row *rows, size_t n, size_t **out);

/* The fleet view as one HTML page (batch_html.c): a chart of the hosts
 * named straggler across jobs with their causes, the jobs by recoverable
 * GPU-hours (top `top`), and every row.  0, or -1 on a write error. */
int tsa_batch_write_html(FILE *out, const tsa_batch_row *rows, size_t n, size_t top);
/* The same into the file at path ("wrote PATH" on stderr); 0, or -1 with
 * the reason on stderr. */
int tsa_batch_html_file(const char *path, const tsa_batch_row *rows, size_t n, size_t top);

/* Rows in one format (0 table, 1 CSV, 2 NDJSON), then, when fleet is set,
 * the fleet view (text or NDJSON; none after CSV) with the top `top` jobs. */
void tsa_batch_print(FILE *out, int format, const tsa_batch_row *rows, size_t n, size_t top,
                     int fleet);
/* 0 when every row is ok, else 1 (the command's exit status). */
int tsa_batch_exit_status(const tsa_batch_row *rows, size_t n);

/* Sharding: `--shard I/N` keeps the jobs whose realpath hashes to I
 * (FNV-1a 64 modulo N), so adding or removing jobs never moves the others
 * to another shard.  Spec parse: 0, or -1 with a message in err. */
typedef struct tsa_batch_shard {
    unsigned long index, count;   /* 0 <= index < count */
} tsa_batch_shard;

int tsa_batch_shard_parse(const char *spec, tsa_batch_shard *shard, char *err, size_t cap);
unsigned long tsa_batch_shard_of(const char *job, unsigned long count);
/* Keeps only the shard's jobs in jobs[0..*n) (the others are freed),
 * order unchanged. */
void tsa_batch_shard_filter(const tsa_batch_shard *shard, char **jobs, size_t *n);

/* `batch merge FILE...`: job rows of shard outputs (NDJSON) -> rows
 * sorted by job, as an unsharded run lists them; fleet lines in the inputs
 * are dropped (the caller recomputes them from all rows).  Returns 0, or -1
 * with a message in err (unreadable file, bad line, other schema version,
 * a job in two inputs). */
int tsa_batch_merge_read(char *const *files, size_t n_files, tsa_batch_row **rows, size_t *n,
                         char *err, size_t cap);

/* Job directories under the roots (recursively; a job directory holds
 * *.tsd dumps or torch.profiler traces; its subdirectories are not
 * searched).  Sorted, malloc'd.  Returns 0 or -1 (out of memory); roots
 * that cannot be read are reported on stderr and skipped. */
int tsa_batch_find_jobs(char *const *roots, size_t n_roots, char ***jobs, size_t *n_jobs);

/* Up-to-date check: the input files' names, sizes and mtimes.  A
 * fingerprint is a malloc'd canonical text; NULL when the directory cannot
 * be listed. */
char *tsa_batch_fingerprint(const char *dir);
/* 1 and *row filled when dir's summary file matches fingerprint, else 0. */
int tsa_batch_cache_load(const char *dir, const char *fingerprint, tsa_batch_row *row);
/* Writes the summary file (atomically); 0 or -1 (e.g. read-only). */
int tsa_batch_cache_store(const char *dir, const char *fingerprint, const tsa_batch_row *row);

/* Run the analysis of jobs[0..n) in up to `parallel` (at most 256) child
 * processes, each killed after timeout_s (0 none).  rows must be zeroed;
 * rows[i] receives job i's row (free each with tsa_batch_row_free).
 * use_cache: skip jobs whose summary is up to date; write_cache: store new
 * summaries.  Returns 0, or -1 when the batch itself failed (out of memory,
 * fork impossible). */
typedef struct tsa_batch_options {
    int parallel;
    double timeout_s;
    int use_cache, write_cache;
    int progress;           /* 1: progress lines on stderr */
} tsa_batch_options;

int tsa_batch_run(char *const *jobs, size_t n, const tsa_batch_options *opt, tsa_batch_row *rows);

#endif
