/* torch.profiler (Kineto) Chrome-trace input: a directory holding one trace
 * per rank (.json or .json.gz) becomes a tsa_job, so every analysis that
 * runs on tscope dumps runs on the traces people already have.
 *
 * The files are parsed as a stream (yajl over zlib), never as a document
 * tree: memory grows with the events kept in the model, not with the file.
 * docs/views.md lists which trace events map to which model records. */
#ifndef TSA_KINETO_H
#define TSA_KINETO_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

/* Number of Kineto trace files in dir (0 when there are none or when the
 * directory holds tscope dumps, which take precedence; -1 when dir cannot
 * be read).  A file counts when its name ends in .json or .json.gz and its
 * first bytes look like a Chrome trace with "traceEvents". */
int tsa_kineto_dir(const char *dir);

/* The sorted paths of those trace files (free each and the array); 0, or
 * -1 when dir cannot be read. */
int tsa_kineto_list(const char *dir, char ***paths, size_t *n);

/* Load every Kineto trace in dir into a new job (ranks sorted by rank; free
 * it with the core's tsa_job_free, core/job_load.h).  Returns 0 when all files parsed cleanly, 1 when some had problems (each
 * one is in job->problems with the file and byte offset; the events before
 * a parse error are kept), 2 when nothing could be read (then *out is NULL
 * and an explanation was printed to stderr). */
int tsa_kineto_load(const char *dir, tsa_job **out);

/* Same, silent: the reason for status 2 goes to err instead of stderr. */
int tsa_kineto_load_ex(const char *dir, tsa_job **out, char *err, size_t errlen);

/* tsa_kineto_load_ex in two halves, so that tscope-report-mpi can spread
 * the parsing: the traces at positions share_index, +share_count, ... of
 * tsa_kineto_list's order (all of them when share_count <= 1) into a new
 * job, in that order (status 0, 1 or 2 as above); then, over every trace
 * loaded, the job-level choices: one run, ranks from file order when no
 * trace names its rank, the world size, one trace per rank (1 when it left
 * traces out, else 0; -1 on OOM). */
int tsa_kineto_load_share(const char *dir, int share_index, int share_count, tsa_job **out,
                          char *err, size_t errlen);
int tsa_kineto_finish(tsa_job *job);

/* Statistics of one parse, for the benchmark and tests. */
typedef struct tsa_kineto_stats {
    uint64_t bytes;          /* JSON bytes parsed (after decompression) */
    uint64_t events;         /* trace events seen (all phases and categories) */
} tsa_kineto_stats;

/* Parse one trace file into *rank (zeroed first; free its contents with
 * the core's tsa_rank_free_contents, core/job_build.h).  Returns 0, or -1
 * with a message naming the byte offset in err (the events before the
 * error stay in *rank). */
int tsa_kineto_load_file(const char *path, tsa_rank *rank, tsa_kineto_stats *stats,
                         char *err, size_t errlen);

/* Bounds on one trace file, so a hostile or broken trace cannot take the
 * machine (issue 13 item 6): a gzip bomb, millions of events, or one
 * string token of hundreds of MB (yajl re-scans an unfinished token at
 * every read, so its cost grows with the square of its length).  A file
 * that passes a bound is cut there: the events before it are kept and the
 * job gets a problem naming the bound and the variable that raises it.
 * Defaults fit a 24 GB machine with a few workers (docs/views.md); each
 * can be set by the environment (TSCOPE_KINETO_MAX_BYTES, _MAX_EVENTS,
 * _MAX_TOKEN, plain integers, 0 = no bound) or by tsa_kineto_set_limits. */
typedef struct tsa_kineto_limits {
    uint64_t max_bytes;      /* decompressed JSON bytes per file */
    uint64_t max_events;     /* trace events per file */
    uint64_t max_token;      /* bytes of one JSON string or number */
} tsa_kineto_limits;

#define TSA_KINETO_DEFAULT_MAX_BYTES (UINT64_C(4) << 30)
#define TSA_KINETO_DEFAULT_MAX_EVENTS UINT64_C(10000000)
#define TSA_KINETO_DEFAULT_MAX_TOKEN (UINT64_C(16) << 20)

/* The bounds in force: those set, else the environment's, else defaults. */
void tsa_kineto_get_limits(tsa_kineto_limits *out);
/* Set them for this process (NULL: back to environment and defaults). */
void tsa_kineto_set_limits(const tsa_kineto_limits *l);

#endif
