/* Which NCCL call record each of a rank's plugin collectives is (the
 * records of rank_nprof.h against the interposed calls).
 *
 * NCCL numbers a communicator's collectives per function as it launches
 * their kernels (seq), so a plugin collective is the call whose place
 * among the rank's calls of that function is seq, except where NCCL's
 * count and the calls part ways (docs/nccl-plugin.md, "Joining"):
 *  - a call captured into a CUDA graph launches nothing then and does not
 *    move the count: NCCL v5+ says so at the call (TSC_EV_NP_CAPTURED),
 *    and such a call takes no place;
 *  - its replays are collectives without a call, reported with the count
 *    as it stands (unchanged): of plugin collectives of one function with
 *    the same seq, only the last is a call;
 *  - a copy-engine collective (v6) is a call but does not move the count:
 *    the calls' places shift by the CE collectives before. */
#ifndef TSA_LOAD_NPROF_JOIN_H
#define TSA_LOAD_NPROF_JOIN_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

typedef struct tsa_np_join {
    int64_t *call_of;     /* per plugin collective: its index in r->nccl, -1 none
                           * (send/recv: -1, they are not numbered) */
    uint8_t *no_call;     /* per plugin collective (not send/recv): 1 = no call is it
                           * (replayed from a graph, or its call was not recorded) */
    uint8_t *captured;    /* per NCCL call: NCCL said it was captured into a graph */
    size_t colls;         /* plugin collectives, not send/recv */
    size_t joined;        /* of those, joined to a call */
    size_t captured_calls;
} tsa_np_join;

/* 0, or -1 when out of memory; a rank without plugin records gives an
 * empty join (all counts 0).  Free with tsa_np_join_free. */
int tsa_nprof_join(const tsa_rank *r, tsa_np_join *out);
void tsa_np_join_free(tsa_np_join *j);

#endif
