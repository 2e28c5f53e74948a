/* Following a running black-box job (`tscope-report live`): the per-step
 * summary files directly in its folder (docs/blackbox.md), read again and
 * again as the ranks append to them.  Each poll hands over only the
 * summaries appended since the last one, from complete chunks (a chunk
 * still being written waits for the next poll).  Files may appear at any
 * time; default-mode dumps are ignored; of several files of one rank (a
 * restarted job in the same folder) the newest is followed. */
#ifndef TSA_BB_FOLLOW_H
#define TSA_BB_FOLLOW_H

#include <stddef.h>
#include <stdint.h>

#include "model/self_cost.h"
#include "reader/dump_reader.h"

typedef struct tsa_bb_source {
    char *path;
    tsr_file *f;          /* NULL until its header is complete, or when not followed */
    int rank;             /* from META, -1 until known */
    int blackbox;         /* META says mode=blackbox */
    int world_size;       /* from META, -1 unknown */
    char run_id[256];     /* from META, "" unknown */
    uint64_t created_ns;  /* file header */
    int active;           /* the newest black-box file of its rank */
    int delivered;        /* summaries of it were handed over */
    int broken;           /* refused (bad header): not read again */
    tsa_self_cost cost;   /* tscope's own cost, as its META chunks last said */
} tsa_bb_source;

/* Called with each batch of new summaries of an active file, each with its
 * extra beside it (x[i] is s[i]'s; flags 0: none; the file writes a step's
 * extra before its summary, so it is never late). */
typedef void (*tsa_bb_steps_fn)(void *ctx, const tsa_bb_source *src, const tsc_step_summary *s,
                                const tsc_step_extra *x, size_t n);

typedef struct tsa_bb_follow {
    char *dir;
    tsa_bb_source *src;
    size_t n, cap;
    int restart;          /* a rank's newer file replaced one already delivered */
    uint64_t problems;    /* problems the reader reported (said on stderr) */
    /* during a poll: the file being read, where its summaries go */
    size_t cur;
    tsa_bb_steps_fn cb;
    void *cb_ctx;
} tsa_bb_follow;

int tsa_bb_follow_init(tsa_bb_follow *fw, const char *dir);
void tsa_bb_follow_free(tsa_bb_follow *fw);

/* Look for new files, then hand over what each active file gained.
 * Returns 1 when the caller must start afresh before this poll's
 * summaries (a rank's newer file replaced one already handed over: every
 * active file is then read again from its start, and on_reset is called
 * first), 0, or -1 when dir cannot be listed (message in err). */
int tsa_bb_follow_poll(tsa_bb_follow *fw, tsa_bb_steps_fn cb, void (*on_reset)(void *ctx),
                       void *ctx, char *err, size_t cap);

#endif
