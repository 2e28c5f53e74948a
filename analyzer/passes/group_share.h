/* Grouped NCCL calls.  Between ncclGroupStart and ncclGroupEnd the calls
 * only enqueue work and return at once; the outermost GroupEnd launches the
 * group and blocks for all of it.  Without GPU records the time of the
 * group is only seen in that GroupEnd.
 *
 * The collective table and the exposed-time rows therefore give each
 * member of a group its share of its GroupEnd's time (by bytes, equal
 * shares when no bytes are known), as consecutive slices of the GroupEnd's
 * interval, and never list GroupStart/GroupEnd as ops.  A member with its
 * own NCCL kernel keeps the kernel's interval.  A share is not a transfer
 * time of its own: bus bandwidth is computed from own-timed calls only. */
#ifndef TSA_GROUP_SHARE_H
#define TSA_GROUP_SHARE_H

#include <stdint.h>

#include "model/model.h"

typedef struct tsa_call_span {
    int64_t start_ns, end_ns;  /* the time this call stands for */
    uint8_t own;               /* 1: its own kernel or blocking call; 0: a group share
                                * or a grouped call that returned at once */
    uint8_t skip;              /* 1: GroupStart/GroupEnd, not an op of its own */
} tsa_call_span;

/* One span per r->nccl[i] (malloc'd, free()).  NULL on OOM or no calls. */
tsa_call_span *tsa_call_spans(const tsa_rank *r);

/* Per r->nccl[i], when it completed on the host: its end, or for a grouped
 * call without its own kernel the end of the GroupEnd that ran its group
 * (the cross-rank pass's meeting point: a late rank's grouped call
 * otherwise "ends" after the others, who waited in GroupEnd).  malloc'd;
 * NULL on OOM. */
int64_t *tsa_group_done(const tsa_rank *r);

#endif
