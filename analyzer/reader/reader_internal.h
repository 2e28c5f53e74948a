/* Internals shared by the reader's source files (not for other parts). */
#ifndef TSR_READER_INTERNAL_H
#define TSR_READER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "dump_reader.h"

/* Bump allocator for descriptors: their addresses must stay stable because
 * events and callers keep pointers to them until tsr_close. */
typedef struct tsr_arena_block {
    struct tsr_arena_block *next;
    size_t used, cap;
    _Alignas(8) unsigned char data[];
} tsr_arena_block;

typedef struct tsr_meta_pair {
    char *key;
    char *value;
} tsr_meta_pair;

/* More distinct keys than this in one file is garbage, not metadata; the
 * cap keeps the linear key search cheap on hostile input. */
#define TSR_MAX_META_KEYS 4096

struct tsr_file {
    char *path;
    int fd;                      /* -1 when reading from memory */
    const uint8_t *mem;          /* memory image, or NULL */
    uint64_t size;
    tsc_file_header hdr;
    tsr_callbacks cb;
    void *ctx;
    tsr_stats stats;

    uint8_t *buf;                /* chunk payload buffer (fd source) */
    size_t buf_cap;

    tsr_arena_block *arena;
    const tsr_desc **slots;      /* open-addressing id -> desc table */
    size_t n_slots, n_descs;

    tsr_meta_pair *meta;         /* in first-seen order */
    size_t n_meta, cap_meta;
    uint32_t *meta_index;        /* hash index into meta (reader_meta.c) */

    uint64_t next_seq;           /* seq the next valid chunk should carry (64-bit:
                                    a chunk with seq 0xffffffff must not wrap it) */
    uint64_t bad_at_last_chunk;  /* stats.bad_chunks when the last valid chunk was read */
    uint8_t unknown_kind_seen[256];
    int unknown_chunk_seen;
    int follow;                  /* tsr_follow_open: the file is still being written */
    uint64_t resume_off;         /* follow: where the next read starts */
    int told_more;               /* follow: "further problems not shown" said */
    /* The last STEP_EXTRA chunk's records, waiting for the STEPS chunk
     * after it (reader_steps.c). */
    tsc_step_extra *xpend;
    uint8_t *xused;
    size_t n_xpend, cap_xpend;
};

/* Report a problem at a file offset (counted; passed on while under the cap). */
void tsr_problem(tsr_file *f, uint64_t offset, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Descriptor table (desc_table.c). */
void *tsr_arena_alloc(tsr_file *f, size_t n);
const tsr_desc *tsr_desc_add(tsr_file *f, const tsr_desc *d); /* copies payload; NULL on OOM */
void tsr_desc_table_free(tsr_file *f);

/* Payload parsers (reader_slots.c, reader_meta.c). */
void tsr_parse_events(tsr_file *f, const tsc_chunk_header *h, uint64_t payload_off,
                      const uint8_t *payload);
void tsr_parse_meta(tsr_file *f, const tsc_chunk_header *h, uint64_t payload_off,
                    const uint8_t *payload);
void tsr_meta_free(tsr_file *f);

/* Black-box chunks (reader_steps.c): STEP_EXTRA records wait for the STEPS
 * chunk after them; tsr_steps_settle counts those still waiting as ignored
 * (a chunk other than STEPS came, or the file ended); tsr_steps_free. */
void tsr_parse_steps(tsr_file *f, const tsc_chunk_header *h, uint64_t payload_off,
                     const uint8_t *payload);
void tsr_parse_step_extra(tsr_file *f, const tsc_chunk_header *h, uint64_t payload_off,
                          const uint8_t *payload);
void tsr_steps_settle(tsr_file *f);
void tsr_steps_free(tsr_file *f);

/* Minimum payload length of a known descriptor type; 0 for unknown types. */
size_t tsr_desc_min_len(uint8_t type);

#endif
