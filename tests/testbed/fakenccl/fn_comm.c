/* Shared-memory communicator: creation, rendezvous, barrier, teardown. */
#include "fn_comm.h"
#include "fn_prof.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define FN_READY 0x52454459u
#define FN_ALIGN(x) (((x) + 63u) & ~(uint64_t)63u)

static __thread char last_error[256];

void fn_set_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
}

const char *fn_last_error(void) { return last_error; }

static long env_long(const char *name, long dflt, long lo, long hi)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return dflt;
    char *end;
    long v = strtol(s, &end, 10);
    if (*end || v < lo || v > hi)
        return dflt;
    return v;
}

void fn_deadline(struct timespec *ts)
{
    clock_gettime(CLOCK_MONOTONIC, ts);
    ts->tv_sec += env_long("FAKENCCL_TIMEOUT_S", 60, 1, 86400);
}

int fn_past(const struct timespec *d)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec > d->tv_sec || (now.tv_sec == d->tv_sec && now.tv_nsec >= d->tv_nsec);
}

int fn_comm_valid(ncclComm_t c) { return c && c->magic == FN_COMM_MAGIC && c->hdr; }

/* Staging sizes trade memory for fewer barriers per collective; small
 * communicators get bigger slots.  Pages are only touched when used. */
static void layout(fn_shm_hdr *h, int nranks)
{
    uint64_t slot = (uint64_t)env_long("FAKENCCL_SLOT_BYTES", 0, 4096, 1 << 28);
    if (!slot) {
        slot = (4u << 20) / (uint64_t)nranks;
        if (slot < (64u << 10))
            slot = 64u << 10;
        if (slot > (1u << 20))
            slot = 1u << 20;
    }
    slot &= ~(uint64_t)63u;
    uint64_t mbox = (uint64_t)env_long("FAKENCCL_MBOX_BYTES", 64 << 10, 64, 1 << 26);
    h->nranks = (uint32_t)nranks;
    h->slot_bytes = slot;
    h->mbox_bytes = mbox;
    h->info_off = FN_ALIGN(sizeof *h);
    h->slot_off = FN_ALIGN(h->info_off + sizeof(fn_rank_info) * (uint64_t)nranks);
    h->mbox_off = FN_ALIGN(h->slot_off + slot * (uint64_t)nranks);
    h->mbox_stride = FN_ALIGN(sizeof(fn_mailbox) + mbox);
    h->net_off = FN_ALIGN(h->mbox_off + h->mbox_stride * (uint64_t)nranks * (uint64_t)nranks);
    h->map_bytes = h->net_off + sizeof(uint32_t) * FN_NET_CHANNELS * (uint64_t)nranks;
}

static ncclResult_t init_sync(fn_shm_hdr *h)
{
    pthread_mutexattr_t ma;
    pthread_condattr_t ca;
    if (pthread_mutexattr_init(&ma) || pthread_condattr_init(&ca))
        return ncclSystemError;
    pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
    /* Robust: a rank killed while holding the lock must not hang the rest. */
    pthread_mutexattr_setrobust(&ma, PTHREAD_MUTEX_ROBUST);
    pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    int rc = pthread_mutex_init(&h->mu, &ma) || pthread_cond_init(&h->cv, &ca);
    pthread_mutexattr_destroy(&ma);
    pthread_condattr_destroy(&ca);
    return rc ? ncclSystemError : ncclSuccess;
}

/* Open or create the segment and map it once it is initialised. */
static ncclResult_t map_segment(const char *name, int nranks, fn_shm_hdr **out)
{
    struct timespec deadline;
    fn_deadline(&deadline);
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd >= 0) {
        fn_shm_hdr tmp;
        memset(&tmp, 0, sizeof tmp);
        layout(&tmp, nranks);
        if (ftruncate(fd, (off_t)tmp.map_bytes) != 0) {
            fn_set_error("ftruncate %s: %s", name, strerror(errno));
            close(fd);
            shm_unlink(name);
            return ncclSystemError;
        }
        void *p = mmap(NULL, tmp.map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        close(fd);
        if (p == MAP_FAILED) {
            fn_set_error("mmap %s: %s", name, strerror(errno));
            shm_unlink(name);
            return ncclSystemError;
        }
        fn_shm_hdr *h = p;
        memcpy(h, &tmp, sizeof tmp);
        if (init_sync(h) != ncclSuccess) {
            munmap(p, tmp.map_bytes);
            shm_unlink(name);
            return ncclSystemError;
        }
        atomic_store(&h->ready, FN_READY);
        *out = h;
        return ncclSuccess;
    }
    if (errno != EEXIST) {
        fn_set_error("shm_open %s: %s", name, strerror(errno));
        return ncclSystemError;
    }
    fd = shm_open(name, O_RDWR, 0600);
    if (fd < 0) {
        fn_set_error("shm_open %s: %s", name, strerror(errno));
        return ncclSystemError;
    }
    /* The creator may not have sized it yet. */
    struct stat st;
    for (;;) {
        if (fstat(fd, &st) != 0) {
            fn_set_error("fstat %s: %s", name, strerror(errno));
            close(fd);
            return ncclSystemError;
        }
        if ((size_t)st.st_size >= sizeof(fn_shm_hdr))
            break;
        if (fn_past(&deadline)) {
            close(fd);
            fn_set_error("timed out waiting for %s to be created", name);
            return ncclSystemError;
        }
        usleep(200);
    }
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        fn_set_error("mmap %s: %s", name, strerror(errno));
        return ncclSystemError;
    }
    fn_shm_hdr *h = p;
    while (atomic_load(&h->ready) != FN_READY) {
        if (fn_past(&deadline)) {
            munmap(p, (size_t)st.st_size);
            fn_set_error("timed out waiting for %s to be initialised", name);
            return ncclSystemError;
        }
        usleep(200);
    }
    if (h->map_bytes != (uint64_t)st.st_size || h->nranks != (uint32_t)nranks) {
        fn_set_error("communicator %s has %u ranks, caller says %d", name, h->nranks, nranks);
        munmap(p, (size_t)st.st_size);
        return ncclInvalidArgument;
    }
    *out = h;
    return ncclSuccess;
}

ncclResult_t fn_comm_attach(const char *name, int nranks, int rank, ncclComm_t *out)
{
    if (nranks < 1 || nranks > FN_MAX_RANKS || rank < 0 || rank >= nranks) {
        fn_set_error("bad rank %d of %d", rank, nranks);
        return ncclInvalidArgument;
    }
    fn_shm_hdr *h;
    ncclResult_t rc = map_segment(name, nranks, &h);
    if (rc != ncclSuccess)
        return rc;
    ncclComm_t c = calloc(1, sizeof *c);
    if (!c) {
        munmap(h, h->map_bytes);
        return ncclSystemError;
    }
    c->magic = FN_COMM_MAGIC;
    c->hdr = h;
    c->rank = rank;
    c->nranks = nranks;
    snprintf(c->name, sizeof c->name, "%s", name);
    const char *lr = getenv("LOCAL_RANK");
    c->device = lr ? atoi(lr) : 0;

    rc = fn_comm_lock(c);
    if (rc == ncclSuccess) {
        fn_rank_info *me = fn_info(c, rank);
        if (me->present) {
            fn_set_error("rank %d joined communicator %s twice", rank, name);
            rc = ncclInvalidUsage;
        } else {
            me->present = 1;
            const char *g = getenv("RANK");
            me->global = g && *g ? atoi(g) : rank;
        }
        fn_comm_unlock(c);
    }
    if (rc == ncclSuccess)
        rc = fn_comm_barrier(c);
    /* Everyone has mapped it (or given up): the name is no longer needed. */
    if (rank == 0 || rc != ncclSuccess)
        shm_unlink(name);
    if (rc != ncclSuccess) {
        fn_comm_detach(c);
        return rc;
    }
    fn_prof_comm_init(c);
    *out = c;
    return ncclSuccess;
}

void fn_comm_detach(ncclComm_t c)
{
    if (!fn_comm_valid(c))
        return;
    fn_prof_comm_fini(c);
    c->magic = 0;
    munmap(c->hdr, c->hdr->map_bytes);
    c->hdr = NULL;
    free(c);
}

ncclResult_t fn_comm_lock(ncclComm_t c)
{
    int rc = pthread_mutex_lock(&c->hdr->mu);
    if (rc == EOWNERDEAD) {
        pthread_mutex_consistent(&c->hdr->mu);
        c->hdr->broken = ncclRemoteError;
        fn_set_error("a rank of the communicator died");
        return ncclSuccess; /* locked; caller sees broken */
    }
    return rc ? ncclSystemError : ncclSuccess;
}

void fn_comm_unlock(ncclComm_t c) { pthread_mutex_unlock(&c->hdr->mu); }

void fn_comm_wake(ncclComm_t c) { pthread_cond_broadcast(&c->hdr->cv); }

ncclResult_t fn_comm_wait(ncclComm_t c, const struct timespec *deadline)
{
    int rc = pthread_cond_timedwait(&c->hdr->cv, &c->hdr->mu, deadline);
    if (rc == EOWNERDEAD) {
        pthread_mutex_consistent(&c->hdr->mu);
        c->hdr->broken = ncclRemoteError;
    } else if (rc == ETIMEDOUT) {
        if (!c->hdr->broken) {
            c->hdr->broken = ncclSystemError;
            fn_set_error("timed out waiting for peers on %s", c->name);
        }
        pthread_cond_broadcast(&c->hdr->cv);
    }
    return (ncclResult_t)c->hdr->broken;
}

void fn_comm_break(ncclComm_t c, ncclResult_t why)
{
    if (fn_comm_lock(c) != ncclSuccess)
        return;
    if (!c->hdr->broken)
        c->hdr->broken = why;
    fn_comm_wake(c);
    fn_comm_unlock(c);
}

ncclResult_t fn_comm_barrier(ncclComm_t c)
{
    struct timespec deadline;
    fn_deadline(&deadline);
    ncclResult_t rc = fn_comm_lock(c);
    if (rc != ncclSuccess)
        return rc;
    fn_shm_hdr *h = c->hdr;
    if (h->broken) {
        rc = (ncclResult_t)h->broken;
        fn_comm_unlock(c);
        return rc;
    }
    uint64_t gen = h->generation;
    if (++h->arrived == h->nranks) {
        h->arrived = 0;
        h->generation++;
        fn_comm_wake(c);
    } else {
        while (h->generation == gen) {
            rc = fn_comm_wait(c, &deadline);
            if (h->generation != gen) {
                rc = ncclSuccess;
                break;
            }
            if (rc != ncclSuccess)
                break;
        }
    }
    fn_comm_unlock(c);
    return rc;
}
