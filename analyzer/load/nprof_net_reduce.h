/* The network's parts of a rank's lean plugin records (nprof_lean.h),
 * from its proxy ops and kernel channels: what the transfer tables, the
 * links and the link cause read of them.  Each 0, or -1 when out of
 * memory (out then holds what was made before, freed with it). */
#ifndef TSA_LOAD_NPROF_NET_REDUCE_H
#define TSA_LOAD_NPROF_NET_REDUCE_H

#include "nprof_lean.h"
#include "rank_nprof.h"

/* A record by its collective's op id: (op id, its index), sorted by
 * tsa_np_by_ref (op id, then index); tsa_np_first_ref gives the first
 * entry of op_id, or n. */
typedef struct tsa_np_op_ref { uint32_t op_id; size_t idx; } tsa_np_op_ref;
int tsa_np_by_ref(const void *a, const void *b);
size_t tsa_np_first_ref(const tsa_np_op_ref *refs, size_t n, uint32_t op_id);

int tsa_np_reduce_xfer(const struct tsa_nprof *np, tsa_np_lean *out);
int tsa_np_reduce_links(const struct tsa_nprof *np, tsa_np_lean *out);
int tsa_np_reduce_p2p(const struct tsa_nprof *np, tsa_np_lean *out);

#endif
