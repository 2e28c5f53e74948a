/* Transfer time and bandwidth of each collective (function on one
 * communicator), by peer and by channel, from the NCCL profiler plugin's
 * proxy records (sender side: each byte once) and, per channel, its
 * kernel's GPU time.  Read by the report (report/plugin_text.c). */
#ifndef TSA_PASSES_COLL_TRANSFER_H
#define TSA_PASSES_COLL_TRANSFER_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

typedef struct tsa_xfer {
    int src, dst;           /* global ranks; -1 in a channel's row */
    int channel;            /* -1 in a peer's row (all channels) */
    size_t ops, steps;
    uint64_t bytes, wire_ns, wait_peer_ns;
    uint64_t kernel_ns;     /* a channel's row: its kernel time summed (GPU timer) */
    size_t kernel_n;        /* ... over that many kernel channel records */
} tsa_xfer;

typedef struct tsa_coll_xfer {
    uint8_t op;             /* enum tsc_nccl_op */
    uint64_t comm_id;       /* 0 unknown */
    uint32_t comm_size;     /* 0 unknown */
    size_t colls;           /* collectives with sender-side proxy records, summed over ranks */
    size_t ranks;           /* ranks they were recorded on */
    uint64_t bytes, wire_ns;
    tsa_xfer *peers; size_t n_peers;       /* by (src, dst) */
    tsa_xfer *channels; size_t n_channels; /* by channel */
} tsa_coll_xfer;

/* Every collective with sender-side proxy records, most bytes first; the
 * caller frees with tsa_coll_xfers_free.  0, or -1 out of memory. */
int tsa_coll_xfers(const tsa_job *job, tsa_coll_xfer **out, size_t *n);
void tsa_coll_xfers_free(tsa_coll_xfer *x, size_t n);

#endif
