/* Run one collective to completion (blocking, all ranks). */
#ifndef FN_COLL_H
#define FN_COLL_H

#include "fn_ops.h"

ncclResult_t fn_coll_run(const fn_op *op);

/* Progress a batch of send/recv operations until all are done. */
ncclResult_t fn_p2p_run(fn_op *ops, size_t n);

#endif
