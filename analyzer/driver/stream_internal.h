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

/* Asks the kernel to read path into the page cache now, in the background:
 * the dump a thread will take next is read from disk while this one is
 * decoded (stage 3 of 10,240 ranks waited on the disk: 88 s for 84 CPU
 * seconds on 2 threads). */
void stream_prefetch(const char *path);

struct tsa_stream {
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

#endif
