/* A recorder (preload/core/recorder.h) that keeps everything in memory, so the
 * cupti tests can look at exactly what the capture recorded. */
#ifndef TSC_FAKE_RECORDER_H
#define TSC_FAKE_RECORDER_H

#include <stddef.h>
#include <stdint.h>

#include "tsc_format.h"

#define FAKE_MAX_EVENTS 4096
#define FAKE_MAX_DESCS 1024
#define FAKE_MAX_META 128

typedef struct fake_desc {
    uint32_t id;
    uint8_t type;
    uint16_t len;
    uint8_t payload[TSC_DESC_MAX_PAYLOAD];
} fake_desc;

typedef struct fake_state {
    int active;               /* what tsc_rec_active returns */
    tsc_event events[FAKE_MAX_EVENTS];
    size_t n_events;
    fake_desc descs[FAKE_MAX_DESCS];
    size_t n_descs;
    uint64_t dropped;
    uint64_t now;             /* tsc_now_ns: advances by 1000 per call */
    char meta_key[FAKE_MAX_META][64];
    char meta_val[FAKE_MAX_META][192];
    size_t n_meta;
    int warnings;
    int wakes;                /* tsc_rec_wake_writer calls */
    unsigned gpu_cut;         /* what tsc_cost_cut(TSC_COST_PART_GPU) answers */
    unsigned long long gpu_cost_ns; /* what the GPU part reported (tsc_cost_part_add) */
    int commits;              /* tsc_bulk_commit calls */
} fake_state;

extern fake_state fake;

void fake_reset(void);
const fake_desc *fake_find_desc(uint32_t id);
/* Number of descriptors of a type. */
size_t fake_count_descs(uint8_t type);
/* Latest value of a metadata key, or NULL. */
const char *fake_meta(const char *key);
/* Number of events of a kind. */
size_t fake_count_events(uint8_t kind);

#endif
