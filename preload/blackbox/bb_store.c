/* Black-box memory: see bb_store.h.  A block's head slot has kind 0 (no
 * record has it), desc = thread id, val = slots that follow, start_ns and
 * end_ns = the earliest and latest start among them. */
#include "bb_store.h"

#include <stdlib.h>
#include <string.h>

int bb_store_init(bb_store *s, size_t ring_bytes, size_t desc_bytes)
{
    memset(s, 0, sizeof *s);
    uint64_t cap = 1024;
    while (cap * 2 * TSC_SLOT_SIZE <= ring_bytes)
        cap *= 2;
    s->ring = malloc(cap * TSC_SLOT_SIZE);
    if (!s->ring)
        return -1;
    s->mask = cap - 1;
    s->desc_max = desc_bytes / TSC_SLOT_SIZE;
    return 0;
}

void bb_store_free(bb_store *s)
{
    free(s->ring);
    free(s->descs);
    memset(s, 0, sizeof *s);
}

size_t bb_store_bytes(const bb_store *s)
{
    return (size_t)(s->mask + 1 + s->desc_cap) * TSC_SLOT_SIZE;
}

static const tsc_event *at(const bb_store *s, uint64_t i) { return &s->ring[i & s->mask]; }

static void evict_one(bb_store *s)
{
    s->tail += 1 + at(s, s->tail)->val;
    s->oldest_ns = s->tail == s->head ? 0 : at(s, s->tail)->start_ns;
}

void bb_store_evict_before(bb_store *s, uint64_t cutoff_ns)
{
    while (s->tail != s->head && at(s, s->tail)->end_ns < cutoff_ns)
        evict_one(s);
}

static int archive_descs(bb_store *s, uint32_t tid, const tsc_event *slots, size_t n, size_t k)
{
    size_t need = s->ndesc + 1 + k;
    if (need > s->desc_cap) {
        size_t cap = s->desc_cap ? s->desc_cap : 256;
        while (cap < need)
            cap *= 2;
        if (cap > s->desc_max)
            cap = s->desc_max;
        tsc_event *p = cap >= need ? realloc(s->descs, cap * TSC_SLOT_SIZE) : NULL;
        if (!p)
            return -1;
        s->descs = p;
        s->desc_cap = cap;
    }
    tsc_event *out = &s->descs[s->ndesc];
    *out++ = (tsc_event){.desc = tid, .val = k};
    for (size_t i = 0; i < n;) {
        size_t w = slots[i].kind == TSC_EV_DESC
                       ? tsc_desc_slots(((const tsc_desc_head *)&slots[i])->payload_len)
                       : 1;
        if (i + w > n)
            break;
        if (slots[i].kind == TSC_EV_DESC) {
            memcpy(out, &slots[i], w * TSC_SLOT_SIZE);
            out += w;
        }
        i += w;
    }
    s->ndesc = need;
    return 0;
}

uint64_t bb_store_take(bb_store *s, uint32_t tid, const tsc_event *slots, size_t n)
{
    size_t nev = 0, ndesc = 0;
    for (size_t i = 0; i < n;) {
        if (slots[i].kind == TSC_EV_DESC) {
            size_t w = tsc_desc_slots(((const tsc_desc_head *)&slots[i])->payload_len);
            if (i + w > n)
                break; /* cut descriptor: the writer never produces one */
            ndesc += w;
            i += w;
        } else {
            nev++;
            i++;
        }
    }
    if (ndesc && archive_descs(s, tid, slots, n, ndesc) < 0)
        s->dropped += 1; /* later windows may refer to it undefined: counted */
    if (!nev)
        return 0;
    uint64_t cap = s->mask + 1;
    size_t keep = nev + 1 > cap ? (size_t)cap - 1 : nev;
    s->dropped += nev - keep;
    while (cap - (s->head - s->tail) < keep + 1)
        evict_one(s);
    uint64_t h = s->head + 1, lo = UINT64_MAX, hi = 0;
    size_t put = 0;
    for (size_t i = 0; i < n && put < keep;) {
        if (slots[i].kind == TSC_EV_DESC) {
            i += tsc_desc_slots(((const tsc_desc_head *)&slots[i])->payload_len);
            continue;
        }
        s->ring[h++ & s->mask] = slots[i];
        if (tsc_event_has_times(slots[i].kind)) { /* not a plugin op's durations */
            lo = slots[i].start_ns < lo ? slots[i].start_ns : lo;
            hi = slots[i].start_ns > hi ? slots[i].start_ns : hi;
        }
        put++;
        i++;
    }
    if (lo > hi)
        lo = hi = 0; /* no record with times: first out when evicting by time */
    s->ring[s->head & s->mask] = (tsc_event){.desc = tid, .val = put, .start_ns = lo, .end_ns = hi};
    if (s->head == s->tail)
        s->oldest_ns = lo;
    s->head = h;
    return put;
}

void bb_store_visit(const bb_store *s, uint64_t lo_ns, uint64_t hi_ns, bb_store_visit_fn fn,
                    void *ctx)
{
    for (uint64_t i = s->tail; i != s->head;) {
        const tsc_event *b = at(s, i);
        uint64_t n = b->val;
        if (b->end_ns > lo_ns && b->start_ns <= hi_ns) /* the block's starts overlap */
            for (uint64_t j = 1; j <= n; j++) {
                const tsc_event *e = at(s, i + j);
                if (e->start_ns > lo_ns && e->start_ns <= hi_ns)
                    fn(ctx, (uint32_t)b->desc, e);
            }
        i += 1 + n;
    }
}

/* Events gathered into EVENTS chunks, one per run of a thread's events. */
typedef struct range_out {
    tsc_dump *d;
    uint32_t tid;
    size_t k;
    long long written;
    int failed;
    tsc_event buf[512];
} range_out;

static void flush_range(range_out *o)
{
    if (o->k && !o->failed) {
        if (tsc_dump_write_chunk(o->d, TSC_CHUNK_EVENTS, o->tid, o->buf,
                                 (uint32_t)(o->k * TSC_SLOT_SIZE)) < 0)
            o->failed = 1;
        else
            o->written += (long long)o->k;
    }
    o->k = 0;
}

static void put_range(void *ctx, uint32_t tid, const tsc_event *e)
{
    range_out *o = ctx;
    if (o->k && (tid != o->tid || o->k == sizeof o->buf / sizeof o->buf[0]))
        flush_range(o);
    o->tid = tid;
    o->buf[o->k++] = *e;
}

long long bb_store_write_range(const bb_store *s, tsc_dump *d, uint64_t lo_ns, uint64_t hi_ns)
{
    for (size_t i = 0; i < s->ndesc;) {
        const tsc_event *b = &s->descs[i];
        if (b->val && tsc_dump_write_chunk(d, TSC_CHUNK_EVENTS, b->desc, b + 1,
                                           (uint32_t)(b->val * TSC_SLOT_SIZE)) < 0)
            return -1;
        i += 1 + b->val;
    }
    static range_out o; /* writer thread only; 16 KiB off the stack */
    o = (range_out){.d = d};
    bb_store_visit(s, lo_ns, hi_ns, put_range, &o);
    flush_range(&o);
    return o.failed ? -1 : o.written;
}
