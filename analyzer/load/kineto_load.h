/* torch.profiler (Kineto) input: a directory holding one trace per rank
 * (.json or .json.gz) becomes a tsa_job, so every analysis that runs on
 * tscope dumps runs on the traces people already have.  The parse itself
 * is kineto/ (kineto/kineto.h: statistics and bounds). */
#ifndef TSA_KINETO_LOAD_H
#define TSA_KINETO_LOAD_H

#include <stddef.h>

#include "kineto/kineto.h"
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
 * it with tsa_job_free, load/job_build.h).  Returns 0 when all files
 * parsed cleanly, 1 when some had problems (each
 * one is in job->problems with the file and byte offset; the events before
 * a parse error are kept), 2 when nothing could be read (then *out is NULL
 * and an explanation was printed to stderr). */
int tsa_kineto_load(const char *dir, tsa_job **out);

/* Same, silent: the reason for status 2 goes to err instead of stderr. */
int tsa_kineto_load_ex(const char *dir, tsa_job **out, char *err, size_t errlen);
/* tsa_kineto_load_ex on up to `threads` threads (< 1, and load_ex: the
 * cores available). */
int tsa_kineto_load_on(const char *dir, int threads, tsa_job **out, char *err, size_t errlen);

/* tsa_kineto_load_ex in two halves, so that tscope-report-mpi can spread
 * the parsing: the traces at positions share_index, +share_count, ... of
 * tsa_kineto_list's order (all of them when share_count <= 1) into a new
 * job, in that order (status 0, 1 or 2 as above); then, over every trace
 * loaded, the job-level choices: one run, ranks from file order when no
 * trace names its rank, the world size, one trace per rank (1 when it left
 * traces out, else 0; -1 on OOM). */
int tsa_kineto_load_share(const char *dir, int share_index, int share_count, tsa_job **out,
                          char *err, size_t errlen);
/* The same on up to `threads` threads (< 1: the cores available), one
 * trace in flight per thread; tsa_kineto_load_share reads on one.  The job
 * is the same whatever the number. */
int tsa_kineto_load_share_on(const char *dir, int share_index, int share_count, int threads,
                             tsa_job **out, char *err, size_t errlen);
int tsa_kineto_finish(tsa_job *job);

/* tsa_kineto_load_share one trace at a time (the streaming report loads
 * and frees each in turn): a job with no rank yet, named as the traces'
 * job is (run id: the directory's name), NULL on OOM; then the trace at
 * path appended to it as a rank, its problem (if any) with it.  0 clean,
 * 1 with a problem (the events before it kept), -1 on OOM. */
tsa_job *tsa_kineto_job_new(const char *dir);
int tsa_kineto_add_trace(tsa_job *job, const char *path);

/* Parse one trace file into *rank (zeroed first; free its contents with
 * tsa_rank_free_contents, load/job_build.h).  Returns 0, or -1
 * with a message naming the byte offset in err (the events before the
 * error stay in *rank). */
int tsa_kineto_load_file(const char *path, tsa_rank *rank, tsa_kineto_stats *stats,
                         char *err, size_t errlen);

#endif
