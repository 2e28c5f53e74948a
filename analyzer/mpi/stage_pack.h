/* The per-rank stages (passes/rank_stages.h) run where the ranks were loaded.
 *
 * Process 0 holds every other process's rank as a remote rank (its bulk records left where they were
 * loaded, tsa_rank.remote); each other process, a "host", holds its share in
 * full.  For each stage process 0 sends every host one request in two
 * parts, a common part (the same for all hosts: the plan) and a host part
 * (what concerns that host's ranks), and each host answers with the
 * stage's results for its ranks.  No MPI here: analyzer/mpi/mpi_runner.c
 * moves the buffers, and the tests move them by hand.  Buffers hold raw
 * structs (one build on every process); every length is bounds-checked. */
#ifndef TSA_STAGE_PACK_H
#define TSA_STAGE_PACK_H

#include "passes/rank_stages.h"
#include "load/pack_buf.h"

typedef enum tsa_stage {
    TSA_STAGE_STEPS = 1,
    TSA_STAGE_WINDOW,
    TSA_STAGE_PASS,
    TSA_STAGE_DONE,            /* no more stages: hosts stop */
} tsa_stage;

/* Where process 0's job finds the ranks one host holds: job index of the
 * host's rank j, or -1 for a rank process 0 left out (duplicate). */
typedef struct tsa_host_map {
    int64_t *job_index;
    size_t n;                  /* ranks the host holds */
} tsa_host_map;

/* ---- process 0 ---- */

/* maps[1..procs) from the remote ranks of job (process 0's, in its final
 * order); held[q]: ranks process q sent.  -1 on OOM (free them anyway). */
int tsa_host_maps_build(const tsa_job *job, const size_t *held, int procs, tsa_host_map *maps);
/* Frees maps[1..procs) and maps. */
void tsa_host_maps_free(tsa_host_map *maps, int procs);

/* The common part: nothing for steps, the plan for window and pass. */
int tsa_stage_common_pack(tsa_stage s, const tsa_window_plan *wp, const tsa_pass_plan *pp,
                          tsa_pack_buf *out);
/* The host part: which ranks are wanted (steps), FLOPs and clock offsets
 * (pass). */
int tsa_stage_host_pack(tsa_stage s, const tsa_analysis *a, const tsa_host_map *m,
                        tsa_pack_buf *out);
/* Puts a host's answer into a (ranks, digests, steps).  -1 when the host
 * failed or the answer is malformed. */
int tsa_stage_reply_unpack(tsa_stage s, tsa_analysis *a, const tsa_host_map *m,
                           const unsigned char *data, size_t len);

/* ---- a host ---- */

typedef struct tsa_stage_host {
    tsa_job *job;              /* its share, in full */
    const char *marker;        /* --step-marker */
    tsa_rank_result *rr;       /* per rank of job */
    tsa_rank_digest *dg;
    uint8_t *wanted;           /* process 0 analyses it */
} tsa_stage_host;

int tsa_stage_host_init(tsa_stage_host *h, tsa_job *job, const char *marker);
void tsa_stage_host_free(tsa_stage_host *h);
/* Runs stage s on the wanted ranks and packs the answer into reply (also
 * when the stage fails: the answer then says so).  -1 only when the reply
 * itself cannot be packed. */
int tsa_stage_host_run(tsa_stage_host *h, tsa_stage s, const unsigned char *common,
                       size_t common_len, const unsigned char *part, size_t part_len,
                       tsa_pack_buf *reply);

#endif
