/* A minimal dump reader for the capture tests: loads a whole file, checks
 * every CRC, and indexes chunks, metadata, descriptors and events.  The
 * real reader belongs to the analyzer; this one exists so the capture
 * tests do not depend on it and check the bytes independently. */
#ifndef TSC_TEST_DUMP_SCAN_H
#define TSC_TEST_DUMP_SCAN_H

#include <stddef.h>
#include <stdint.h>

#include "tsc_format.h"

#define SCAN_MAX_CHUNKS 4096
#define SCAN_MAX_EVENTS 200000
#define SCAN_MAX_DESCS 20000

typedef struct scan_event {
    uint32_t tid;
    tsc_event ev;
} scan_event;

typedef struct scan_desc {
    uint32_t tid;
    uint8_t type;
    uint32_t id;
    uint16_t len;
    const unsigned char *payload; /* into an aligned copy of its chunk */
} scan_desc;

typedef struct dump_scan {
    unsigned char *data;
    size_t size;
    int bad_crc;               /* chunks whose header or payload CRC failed */
    int bad_layout;            /* anything else malformed */
    size_t nchunks;
    tsc_chunk_header chunks[SCAN_MAX_CHUNKS];
    size_t chunk_off[SCAN_MAX_CHUNKS];
    size_t nevents;
    scan_event *events;
    size_t ndescs;
    scan_desc *descs;
    int end_chunks;
    void *copies[SCAN_MAX_CHUNKS]; /* aligned EVENTS payloads */
    size_t ncopies;
} dump_scan;

/* 0 on success (file read and header valid), -1 otherwise. */
int dump_scan_load(dump_scan *s, const char *path);
void dump_scan_free(dump_scan *s);
/* Latest value of a key over all META and END chunks (later override);
 * NULL if absent.  Points into the image. */
const char *dump_scan_meta(const dump_scan *s, const char *key);
const scan_desc *dump_scan_desc(const dump_scan *s, uint32_t id);
/* Number of files in dir whose name ends in .tsd; the first one's path in
 * first (if not NULL). */
int dump_scan_count_files(const char *dir, char *first, size_t cap);

#endif
