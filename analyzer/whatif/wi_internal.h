/* Shared between the parts of the pipeline what-if (analyzer/whatif):
 *   wi_build (graph from the job) -> wi_topo (stages, DP ranks) ->
 *   wi_ideal (ideal durations) -> wi_blame (replays, savings, class) ->
 *   wi_findings / wi_text / wi_json.
 * Not part of the analyzer's public API. */
#ifndef TSA_WI_INTERNAL_H
#define TSA_WI_INTERNAL_H

#include "model/model.h"
#include "whatif.h"
#include "wi_graph.h"

/* One matched send/receive pair between two workers (rank indices). */
typedef struct wi_pair {
    int32_t sender, receiver;
    int64_t send_start;          /* recorded, common clock */
} wi_pair;

/* One kernel of a GPU compute node: its name (hashed: the same on every
 * rank) and duration; a node's are kerns[k_first .. + n_k]. */
typedef struct wi_kern {
    uint64_t name;
    int64_t dur;
} wi_kern;

typedef struct wi_build {
    wi_graph g;
    wi_kern *kerns; size_t n_kerns, cap_kerns;
    uint8_t *host_mode;          /* per rank: 1 when its compute is host time */
    size_t n_ranks;
    wi_pair *pairs; size_t n_pairs, cap_pairs;
    uint32_t *step_index;        /* per graph step: the rank-0 step number it came from */
} wi_build;

/* wi_build.c: the graph of the job's analysed steps.  Returns 0, 1 when
 * the job has nothing to build from (no steps common to all ranks), -1 out
 * of memory. */
int wi_build_graph(const tsa_job *job, wi_build *b);
void wi_build_free(wi_build *b);

/* wi_topo.c: stages and DP ranks from the send/receive pairs.  Returns 1
 * for a pipeline (every worker on one chain of equal length >= 2), else 0
 * (stage_of / dp_of untouched). */
int wi_topology(const wi_build *b, int32_t *stage_of, int32_t *dp_of, size_t *n_stages,
                size_t *n_dp);

/* wi_ideal.c: sets every node's ideal duration (see docs/whatif.md). */
int wi_set_ideal(wi_build *b);

/* wi_blame.c: replays, savings and the class, into r. */
int wi_blame(wi_build *b, tsa_pipe_result *r);

/* wi_findings.c: the PIPE.* finding of r, when it has a class. */
void wi_add_finding(const tsa_pipe_result *r, tsa_findings *f);

/* wi_okind.c */
uint8_t wi_okind_of_comm(uint8_t op);
uint8_t wi_okind_of_phase(uint8_t phase);
uint64_t wi_hash(uint64_t h, uint64_t v);
uint64_t wi_hash_str(uint64_t h, const char *s);
int64_t wi_median_i64(int64_t *v, size_t n);

#endif
