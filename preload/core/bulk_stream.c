/* See bulk_stream.h. */
#include "bulk_stream.h"

#include <string.h>

#include "dump_file.h"
#include "intern.h"
#include "rec_counters.h"
#include "recorder_internal.h"
#include "tsc_format.h"

#define TSC_BULK_SLOTS 4096u   /* 128 KiB per chunk at most */

static struct {
    tsc_event slots[TSC_BULK_SLOTS];
    size_t n;
    uint64_t events;           /* events (not descriptor slots) staged */
    uint64_t kernels;          /* of those, kernels */
    uint64_t kernels_lost;
    uint64_t generation;       /* the recorder's intern generation last seen */
    uint64_t lost_defs;        /* times descriptors may have been lost */
    tsc_intern intern;
} bulk;

void tsc_bulk_reset(void)
{
    bulk.lost_defs++;
    bulk.n = 0;
    bulk.events = bulk.kernels = 0;
    tsc_intern_reset(&bulk.intern);
}

void tsc_bulk_commit(void)
{
    if (bulk.n == 0)
        return;
    if (tsc_rec_write_slots_locked(TSC_GPU_STREAM_TID, bulk.slots, bulk.n, bulk.events) != 0) {
        /* Its descriptors are not in the file: define them again. */
        bulk.kernels_lost += bulk.kernels;
        tsc_intern_reset(&bulk.intern);
        bulk.lost_defs++;
    }
    bulk.n = 0;
    bulk.events = bulk.kernels = 0;
}

static int room_for(size_t slots)
{
    if (bulk.n + slots > TSC_BULK_SLOTS)
        tsc_bulk_commit();
    return slots <= TSC_BULK_SLOTS;
}

uint32_t tsc_bulk_intern(uint8_t desc_type, const void *payload, uint16_t len)
{
    if (len > TSC_DESC_MAX_PAYLOAD || (len && payload == NULL))
        return 0;
    /* A chunk of another stream failed: descriptors may be missing. */
    uint64_t gen = tsc_rec_intern_generation();
    if (gen != bulk.generation) {
        tsc_bulk_commit();
        tsc_intern_reset(&bulk.intern);
        bulk.generation = gen;
        bulk.lost_defs++;
    }
    uint64_t h = 0;
    uint32_t id = tsc_intern_lookup(&bulk.intern, desc_type, payload, len, &h);
    if (id != 0)
        return id;
    size_t need = tsc_desc_slots(len);
    if (!room_for(need))
        return 0;
    id = tsc_rec_new_desc_id();
    size_t n = tsc_encode_desc(bulk.slots + bulk.n, TSC_BULK_SLOTS - bulk.n, desc_type, id,
                               payload, len);
    if (n == 0)
        return 0;
    bulk.n += n;
    tsc_intern_insert(&bulk.intern, desc_type, payload, len, h, id);
    return id;
}

uint32_t tsc_bulk_string(const char *s, size_t len)
{
    if (s == NULL)
        return 0;
    if (len > TSC_DESC_MAX_PAYLOAD)
        len = TSC_DESC_MAX_PAYLOAD;
    return tsc_bulk_intern(TSC_DESC_STRING, s, (uint16_t)len);
}

void tsc_bulk_event(uint8_t kind, uint8_t flags, uint16_t aux, uint32_t desc, uint64_t start_ns,
                    uint64_t end_ns, uint64_t val)
{
    if (desc == 0 && tsc_event_needs_desc(kind)) {
        tsc_rec_count_dropped(1);
        return;
    }
    room_for(1);
    tsc_event *e = &bulk.slots[bulk.n++];
    *e = (tsc_event){.kind = kind, .flags = flags, .aux = aux, .desc = desc,
                     .start_ns = start_ns, .end_ns = end_ns, .val = val};
    bulk.events++;
    if (kind == TSC_EV_KERNEL || kind == TSC_EV_KERNEL_LAUNCH)
        bulk.kernels++;
}

uint64_t tsc_bulk_generation(void)
{
    return bulk.lost_defs + tsc_rec_intern_generation();
}

uint64_t tsc_bulk_kernels_lost(void)
{
    return bulk.kernels_lost;
}
