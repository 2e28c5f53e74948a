/* In-memory recorder for tests; see fake_recorder.h.  Interning follows
 * the real contract: the same (type, payload) gives the same id. */
#include "fake_recorder.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "bulk_stream.h"
#include "parts.h"
#include "recorder.h"
#include "self_cost.h"

fake_state fake;

void fake_reset(void)
{
    memset(&fake, 0, sizeof fake);
    fake.active = 1;
    fake.now = 1700000000000000000ull;
}

uint64_t tsc_now_ns(void)
{
    fake.now += 1000;
    return fake.now;
}

int tsc_rec_active(void)
{
    return fake.active;
}

uint32_t tsc_rec_intern(uint8_t desc_type, const void *payload, uint16_t len)
{
    if (!fake.active || len > TSC_DESC_MAX_PAYLOAD)
        return 0;
    for (size_t i = 0; i < fake.n_descs; i++)
        if (fake.descs[i].type == desc_type && fake.descs[i].len == len &&
            memcmp(fake.descs[i].payload, payload, len) == 0)
            return fake.descs[i].id;
    if (fake.n_descs == FAKE_MAX_DESCS)
        return 0;
    fake_desc *d = &fake.descs[fake.n_descs++];
    d->id = (uint32_t)fake.n_descs;
    d->type = desc_type;
    d->len = len;
    memcpy(d->payload, payload, len);
    return d->id;
}

uint32_t tsc_rec_string(const char *s, size_t len)
{
    if (len > TSC_DESC_MAX_PAYLOAD)
        len = TSC_DESC_MAX_PAYLOAD;
    return tsc_rec_intern(TSC_DESC_STRING, s, (uint16_t)len);
}

void tsc_rec_event(uint8_t kind, uint8_t flags, uint16_t aux, uint32_t desc, uint64_t start_ns,
                   uint64_t end_ns, uint64_t val)
{
    if (!fake.active || fake.n_events == FAKE_MAX_EVENTS) {
        fake.dropped++;
        return;
    }
    int needs_desc = kind != TSC_EV_EXTCORR && kind != TSC_EV_CLOCK;
    if (needs_desc && desc == 0) {
        fake.dropped++;
        return;
    }
    tsc_event *e = &fake.events[fake.n_events++];
    e->kind = kind;
    e->flags = flags;
    e->aux = aux;
    e->desc = desc;
    e->start_ns = start_ns;
    e->end_ns = end_ns;
    e->val = val;
}

void tsc_rec_meta(const char *key, const char *value)
{
    for (size_t i = 0; i < fake.n_meta; i++)
        if (strcmp(fake.meta_key[i], key) == 0) {
            snprintf(fake.meta_val[i], sizeof fake.meta_val[i], "%s", value);
            return;
        }
    if (fake.n_meta == FAKE_MAX_META)
        return;
    snprintf(fake.meta_key[fake.n_meta], sizeof fake.meta_key[0], "%s", key);
    snprintf(fake.meta_val[fake.n_meta], sizeof fake.meta_val[0], "%s", value);
    fake.n_meta++;
}

void tsc_rec_count_dropped(uint64_t n)
{
    fake.dropped += n;
}

void tsc_rec_flush(void)
{
}

void tsc_warn_once(const char *key, const char *fmt, ...)
{
    (void)key;
    (void)fmt;
    fake.warnings++;
}

const fake_desc *fake_find_desc(uint32_t id)
{
    for (size_t i = 0; i < fake.n_descs; i++)
        if (fake.descs[i].id == id)
            return &fake.descs[i];
    return NULL;
}

size_t fake_count_descs(uint8_t type)
{
    size_t n = 0;
    for (size_t i = 0; i < fake.n_descs; i++)
        n += fake.descs[i].type == type;
    return n;
}

const char *fake_meta(const char *key)
{
    for (size_t i = 0; i < fake.n_meta; i++)
        if (strcmp(fake.meta_key[i], key) == 0)
            return fake.meta_val[i];
    return NULL;
}

size_t fake_count_events(uint8_t kind)
{
    size_t n = 0;
    for (size_t i = 0; i < fake.n_events; i++)
        n += fake.events[i].kind == kind;
    return n;
}

void tsc_rec_wake_writer(void)
{
    fake.wakes++;
}

void tsc_rec_help_drain(void)
{
}

/* The GPU record stream lands in the same store as the rings. */
uint32_t tsc_bulk_intern(uint8_t desc_type, const void *payload, uint16_t len)
{
    return tsc_rec_intern(desc_type, payload, len);
}

uint32_t tsc_bulk_string(const char *s, size_t len)
{
    return tsc_rec_string(s, len);
}

void tsc_bulk_event(uint8_t kind, uint8_t flags, uint16_t aux, uint32_t desc, uint64_t start_ns,
                    uint64_t end_ns, uint64_t val)
{
    tsc_rec_event(kind, flags, aux, desc, start_ns, end_ns, val);
}

void tsc_bulk_commit(void)
{
    fake.commits++;
}

uint64_t tsc_bulk_generation(void)
{
    return 0;
}

uint64_t tsc_bulk_kernels_lost(void)
{
    return 0;
}

void tsc_bulk_reset(void)
{
}

/* The per-call state the core keeps for the parts (core/parts.h): never
 * inside an NCCL call here. */
TSC_TLS int tsc_call_in_nccl;

/* The budget (self_cost.h): full detail, the GPU part's reported cost
 * kept for a test to read. */
uint32_t tsc_cost_cut(enum tsc_cost_part part)
{
    return part == TSC_COST_PART_GPU ? fake.gpu_cut : 0;
}

void tsc_cost_part_add(enum tsc_cost_part part, uint64_t ns, uint64_t records)
{
    if (part == TSC_COST_PART_GPU)
        fake.gpu_cost_ns += ns + records;
}
