/* Buffer walking and recording; see activity_sink.h. */
#include "activity_sink.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "memory_xlate.h"
#include "nvtx_pair.h"
#include "recorder.h"

/* Threads whose name has been written: an open-addressing set.  A job has
 * tens of threads that launch GPU work; past the cap, names are skipped. */
#define TSC_KNOWN_THREADS 1024u

static struct {
    pthread_mutex_t lock;
    tsc_cupti_mode mode;
    tsc_corr_cache cache;
    tsc_nvtx_pairer nvtx;
    uint32_t known_tid[TSC_KNOWN_THREADS];
    tsc_sink_stats stats;
} sink = {.lock = PTHREAD_MUTEX_INITIALIZER, .mode = TSC_CUPTI_FULL};

void tsc_sink_reset(tsc_cupti_mode mode)
{
    pthread_mutex_lock(&sink.lock);
    sink.mode = mode;
    tsc_corr_clear(&sink.cache);
    tsc_nvtx_init(&sink.nvtx);
    memset(sink.known_tid, 0, sizeof sink.known_tid);
    memset(&sink.stats, 0, sizeof sink.stats);
    pthread_mutex_unlock(&sink.lock);
}

/* 1 if tid was not in the set (and is now), 0 if known or the set is full.
 * Caller holds the lock. */
static int remember_thread(uint32_t tid)
{
    if (tid == 0)
        return 0;
    for (uint32_t i = 0; i < TSC_KNOWN_THREADS; i++) {
        uint32_t *slot = &sink.known_tid[(tid + i) % TSC_KNOWN_THREADS];
        if (*slot == tid)
            return 0;
        if (*slot == 0) {
            *slot = tid;
            return 1;
        }
    }
    return 0;
}

static size_t read_thread_name(uint32_t tid, char *buf, size_t cap)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%u/comm", tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, cap);
    close(fd);
    if (n <= 0)
        return 0;
    size_t len = (size_t)n;
    while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\0'))
        len--;
    return len;
}

static void define_thread(uint32_t tid, const char *name)
{
    struct {
        tsc_desc_thread head;
        char name[64];
    } payload;
    size_t len;
    if (name != NULL) {
        len = strnlen(name, sizeof payload.name);
        memcpy(payload.name, name, len);
    } else {
        len = read_thread_name(tid, payload.name, sizeof payload.name);
    }
    if (len == 0)
        return; /* thread gone before its buffer completed: nothing to say */
    payload.head.tid = tid;
    payload.head.name_len = (uint32_t)len;
    tsc_rec_intern(TSC_DESC_THREAD, &payload, (uint16_t)(sizeof payload.head + len));
}

void tsc_sink_note_thread(uint32_t tid, const char *name)
{
    pthread_mutex_lock(&sink.lock);
    int fresh = remember_thread(tid);
    pthread_mutex_unlock(&sink.lock);
    if (fresh)
        define_thread(tid, name);
}

void tsc_sink_emit(const tsc_xrec *x)
{
    uint32_t desc = x->desc_field;
    if (x->desc_type != 0) {
        /* The descriptor embeds the name id, so copy it to fill that in. */
        tsc_xrec local = *x;
        if (x->name != NULL) {
            uint32_t name_id = tsc_rec_string(x->name, strlen(x->name));
            if (name_id == 0) {
                tsc_rec_event(x->ev_kind, x->flags, x->aux, 0, x->start_ns, x->end_ns, x->val);
                return; /* desc 0: the recorder counts it as dropped */
            }
            if (x->desc_type == TSC_DESC_KERNEL)
                local.desc.kernel.name = name_id;
            else if (x->desc_type == TSC_DESC_API)
                local.desc.api.name = name_id;
        }
        desc = tsc_rec_intern(x->desc_type, &local.desc, x->desc_len);
    }
    if (x->host_tid != 0)
        tsc_sink_note_thread(x->host_tid, NULL);
    tsc_rec_event(x->ev_kind, x->flags, x->aux, desc, x->start_ns, x->end_ns, x->val);
}

/* NVTX markers (kept out of activity_xlate: they need the pairer's
 * state).  Returns 1 when a range was recorded.  Caller holds no lock. */
static int marker_record(const CUpti_ActivityMarker2 *m)
{
    uint32_t tid = m->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ? m->objectId.pt.threadId : 0;
    tsc_nvtx_range r;
    int have = 0;
    pthread_mutex_lock(&sink.lock);
    if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS) {
        memset(&r, 0, sizeof r);
        r.id = m->id;
        r.tid = tid;
        r.start_ns = r.end_ns = m->timestamp;
        snprintf(r.name, sizeof r.name, "%s", m->name ? m->name : "");
        have = 1;
    } else if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
        tsc_nvtx_start(&sink.nvtx, m->id, m->timestamp, tid, m->name);
    } else if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
        have = tsc_nvtx_end(&sink.nvtx, m->id, m->timestamp, &r);
    }
    pthread_mutex_unlock(&sink.lock);
    if (!have)
        return 0;
    uint32_t name = tsc_rec_string(r.name, strlen(r.name));
    tsc_rec_event(TSC_EV_NVTX, 0, 0, name, r.start_ns, r.end_ns, 0);
    if (r.tid != 0)
        tsc_sink_note_thread(r.tid, NULL);
    return 1;
}

void tsc_sink_buffer(uint8_t *buffer, size_t valid_size, tsc_next_record_fn next)
{
    if (buffer == NULL || valid_size == 0 || next == NULL)
        return;
    CUpti_Activity *rec = NULL;
    uint64_t records = 0, written = 0, skipped = 0, overhead = 0;
    while (next(buffer, valid_size, &rec) == CUPTI_SUCCESS && rec != NULL) {
        tsc_xrec x;
        records++;
        if (rec->kind == CUPTI_ACTIVITY_KIND_MARKER) {
            if (sink.mode != TSC_CUPTI_OFF && marker_record((const CUpti_ActivityMarker2 *)rec))
                written++;
            else
                skipped++;
            continue;
        }
        if (tsc_is_memory_kind(rec->kind)) {
            tsc_xrec xs[TSC_MEM_XREC_MAX];
            size_t n = sink.mode != TSC_CUPTI_OFF ? tsc_xlate_memory_record(rec, xs) : 0;
            for (size_t i = 0; i < n; i++)
                tsc_sink_emit(&xs[i]);
            written += n;
            skipped += n == 0;
            continue;
        }
        /* The cache lock also orders API records before the syncs that
         * look them up when two buffers complete at once. */
        pthread_mutex_lock(&sink.lock);
        int keep = tsc_xlate_record(rec, sink.mode, &sink.cache, &overhead, &x);
        pthread_mutex_unlock(&sink.lock);
        if (keep) {
            tsc_sink_emit(&x);
            written++;
        } else {
            skipped++;
        }
    }
    pthread_mutex_lock(&sink.lock);
    sink.stats.records += records;
    sink.stats.written += written;
    sink.stats.skipped += skipped;
    sink.stats.overhead_ns += overhead;
    pthread_mutex_unlock(&sink.lock);
}

tsc_sink_stats tsc_sink_get_stats(void)
{
    pthread_mutex_lock(&sink.lock);
    tsc_sink_stats s = sink.stats;
    pthread_mutex_unlock(&sink.lock);
    return s;
}
