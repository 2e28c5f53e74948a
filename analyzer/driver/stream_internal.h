/* What stream_load.c and stream_runner.c share (stream.h). */
#ifndef TSA_STREAM_INTERNAL_H
#define TSA_STREAM_INTERNAL_H

#include "load/pack_buf.h"
#include "stream.h"
#include "stream_gemms.h"
#include "stream_timing.h"

/* One dump of the main run, by its position in path order. */
typedef struct stream_slot {
    tsa_pack_buf lean;          /* its rank (lean) and its problems: share_pack.h */
    struct tsa_lean_steps *steps; /* stage 1's steps, compact (load/lean_steps.h) */
    stream_gemms gemms;         /* for stage 2 */
    tsa_step_method method;     /* stage 1's answers */
    size_t steps_found;
    int cut;
    char cut_note[384];
} stream_slot;

/* What differs between a directory of dumps and one of torch.profiler
 * traces (stream_source.c): which files, one file's rank, the choices made
 * over every rank once they are in.  The rest of the stream is the same. */
typedef struct stream_source {
    const char *what;           /* "dump", "trace": the per-rank limit's problem */
    /* The job before any rank (with the problems of files left out) and
     * the paths to load, in path order; -1 with err. */
    int (*plan)(const char *dir, const tsa_load_options *opt, tsa_job **job, char ***paths,
                size_t *n_paths, char *err, size_t err_len);
    /* A job for one file's rank; NULL on OOM. */
    tsa_job *(*new_job)(const struct tsa_stream *st);
    /* Appends path's rank (if any) and problems to pj: 1 a rank, 0 none
     * (a problem says why), -1 OOM. */
    int (*load)(struct tsa_stream *st, tsa_job *pj, const char *path, int worker);
    /* After the last file (loaded: how many gave a rank), on the lean job
     * in path order: the job-level choices the in-memory loader makes.
     * -1 with err. */
    int (*done)(struct tsa_stream *st, tsa_job *job, size_t loaded, char *err, size_t err_len);
} stream_source;

extern const stream_source stream_dumps, stream_traces;

/* Asks the kernel to read path into the page cache now, in the background:
 * the dump a thread will take next is read from disk while this one is
 * decoded (stage 3 of 10,240 ranks waited on the disk: 88 s for 84 CPU
 * seconds on 2 threads). */
void stream_prefetch(const char *path);

struct tsa_stream {
    const stream_source *src;
    char *dir;
    tsa_load_options lopt;
    const char *marker;
    int jobs;
    unsigned long long max_rank_bytes;
    char **paths; size_t n_paths; /* the main run's dumps, as named on disk */
    stream_slot *slots;
    size_t first;               /* loading: the batch's first position */
    struct tsa_load_scratch **scratch; /* one per thread */
    tsa_window_plan wplan;      /* stage 2's plan, for reading ranks again */
    tsa_analysis *a;            /* during stage 3 */
    const tsa_pass_plan *pplan;
    tsa_job **held; size_t n_held; /* ranks lent by hold */
    tsa_rank_runner runner;
    stream_timing timing;
};

/* The lean rank's file read again, through stage 1 (and stage 2 when
 * `window`, with st->wplan), with the rank number, world size and clock
 * offset the job-level passes gave the lean copy: the rank as the
 * in-memory path holds it before stage 3.  rr, d receive the stages'
 * answers.  NULL when the file no longer gives the rank read the first
 * time (said on stderr) or out of memory. */
tsa_job *stream_reread(tsa_stream *st, const tsa_rank *lean, int worker, int window,
                       tsa_rank_result *rr, tsa_rank_digest *d);

#endif
