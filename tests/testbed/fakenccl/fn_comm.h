/* One communicator of the fake NCCL: a POSIX shared-memory segment that all
 * of its ranks map.  It holds a process-shared robust mutex and condition
 * variable, a generation barrier, per-rank staging slots for collectives and
 * per-pair mailboxes for send/recv.  Every wait has a deadline so a test
 * whose peer died fails with ncclSystemError instead of hanging. */
#ifndef FN_COMM_H
#define FN_COMM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "nccl_abi.h"

#define FN_ID_MAGIC "FNCCL1"
#define FN_NAME_MAX 64
#define FN_MAX_RANKS 512
#define FN_NET_CHANNELS 32

/* What a rank says about the operation it entered, checked across ranks so
 * a test program that calls mismatched collectives fails loudly. */
typedef struct fn_rank_info {
    uint32_t present;   /* attached */
    int32_t color, key; /* CommSplit arguments */
    uint32_t op, dtype, redop;
    int32_t root;
    int32_t global;     /* the process's RANK (else its rank here): the simulated
                         * network's links join processes, not comm ranks */
    uint64_t count;
} fn_rank_info;

typedef struct fn_mailbox {
    uint64_t total;   /* bytes of the whole message */
    uint64_t offset;  /* where this piece starts in it */
    uint64_t len;     /* bytes in data */
    uint32_t full;
    uint32_t pad;
    /* data follows, mbox_bytes of it */
} fn_mailbox;

typedef struct fn_shm_hdr {
    _Atomic uint32_t ready;   /* FN_READY once the creator has initialised */
    uint32_t nranks;
    uint64_t map_bytes;
    uint64_t slot_bytes;
    uint64_t mbox_bytes;
    uint64_t info_off, slot_off, mbox_off, mbox_stride;
    uint64_t net_off;         /* fn_net.h: steps delivered per (rank, channel) */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    uint32_t arrived;
    uint32_t broken;          /* ncclResult_t every later wait returns, 0 = fine */
    uint64_t generation;
} fn_shm_hdr;

struct ncclComm {
    uint32_t magic;           /* FN_COMM_MAGIC while alive */
    fn_shm_hdr *hdr;
    int rank, nranks, device;
    uint64_t split_count;     /* splits done on this comm: names the children */
    char name[FN_NAME_MAX];
    unsigned long long dev_buffers; /* cuMemCreate handle of its device buffers, 0 none */
    void *prof_ctx;           /* profiler plugin context (fn_prof.h), NULL none */
    int prof_mask;            /* event types the plugin asked for */
    uint64_t prof_hash;       /* the hash v1-v4 descriptors carry */
    uint64_t prof_seq[16];    /* per-function sequence numbers, by enum fn_kind */
    uint64_t prof_calls;      /* collective calls made (FAKENCCL_GRAPH picks one) */
    uint32_t prof_ce_seq;     /* copy-engine sequence number (one per sync) */
    uint64_t prof_ce_pick;    /* CE-capable calls so far (FAKENCCL_CE picks every N-th) */
    int prof_ce_complete;     /* the CE sync flavour, alternating as NCCL's */
    uint32_t net_got[FN_NET_CHANNELS]; /* ring steps received per channel (fn_net.h) */
    uint64_t net_colls;       /* collectives run over the simulated ring */
};

#define FN_COMM_MAGIC 0x6e63636cu

/* Attach to (creating if first) the segment `name` as `rank` of `nranks`
 * and wait until all ranks have attached.  The segment name is unlinked
 * once everyone is in, so nothing is left behind even if a rank crashes
 * later. */
ncclResult_t fn_comm_attach(const char *name, int nranks, int rank, ncclComm_t *out);
void fn_comm_detach(ncclComm_t comm);
int fn_comm_valid(ncclComm_t comm);

/* Lock the comm, arrive at the barrier, wait for everybody, unlock.
 * Returns ncclSuccess or the reason the comm is broken. */
ncclResult_t fn_comm_barrier(ncclComm_t comm);

/* Mark the comm broken (abort, timeout, dead peer) and wake all waiters. */
void fn_comm_break(ncclComm_t comm, ncclResult_t why);

/* Locking with dead-owner recovery; the _wait variant waits on the comm's
 * condvar until `deadline` (CLOCK_MONOTONIC).  Return 0, or the
 * ncclResult_t that ends the operation. */
ncclResult_t fn_comm_lock(ncclComm_t comm);
void fn_comm_unlock(ncclComm_t comm);
ncclResult_t fn_comm_wait(ncclComm_t comm, const struct timespec *deadline);
void fn_comm_wake(ncclComm_t comm);

/* Deadline FAKENCCL_TIMEOUT_S seconds (default 60) from now. */
void fn_deadline(struct timespec *ts);
int fn_past(const struct timespec *deadline);

static inline fn_rank_info *fn_info(ncclComm_t c, int r)
{
    return (fn_rank_info *)((char *)c->hdr + c->hdr->info_off) + r;
}
static inline char *fn_slot(ncclComm_t c, int r)
{
    return (char *)c->hdr + c->hdr->slot_off + (uint64_t)r * c->hdr->slot_bytes;
}
static inline fn_mailbox *fn_mbox(ncclComm_t c, int src, int dst)
{
    return (fn_mailbox *)((char *)c->hdr + c->hdr->mbox_off +
                          ((uint64_t)src * c->hdr->nranks + dst) * c->hdr->mbox_stride);
}

/* Ring steps delivered into comm rank r on channel ch (fn_net.h). */
static inline _Atomic uint32_t *fn_net_counter(ncclComm_t c, int r, int ch)
{
    return (_Atomic uint32_t *)((char *)c->hdr + c->hdr->net_off) +
           (uint64_t)r * FN_NET_CHANNELS + (uint64_t)ch;
}

/* Thread-local message for ncclGetLastError. */
void fn_set_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *fn_last_error(void);

#endif
