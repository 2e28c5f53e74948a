/* Hand-written dump images for the reader tests, built from the format
 * structs and the project's CRC (deliberately not through the preload's
 * writer, so a bug shared by writer and reader cannot hide). */
#ifndef TEST_DUMP_BUILDER_H
#define TEST_DUMP_BUILDER_H

#include <stddef.h>
#include <stdint.h>

#include "tsc_format.h"

typedef struct tb_buf {
    uint8_t *data;
    size_t len, cap;
} tb_buf;

/* Slots being assembled for one EVENTS chunk. */
typedef struct tb_slots {
    tsc_event *s;
    size_t n, cap;
} tb_slots;

void tb_free(tb_buf *b);
void tb_append(tb_buf *b, const void *p, size_t n);

/* Valid v1 file header (then patch fields and call tb_fix_header_crc). */
void tb_header(tb_buf *b, uint64_t created_ns, uint32_t pid);
void tb_fix_header_crc(tb_buf *b);

/* Append a chunk with correct CRCs; returns its offset in the file. */
size_t tb_chunk(tb_buf *b, uint16_t type, uint32_t tid, uint32_t seq, const void *payload,
                uint32_t len);
/* Recompute the header CRC of the chunk at `off` after patching it. */
void tb_fix_chunk_crc(tb_buf *b, size_t off);

/* META/END payload from a NULL-terminated key, value, key, value... list. */
size_t tb_meta(char *out, size_t cap, const char *const *kv);

void tb_event(tb_slots *s, uint8_t kind, uint8_t flags, uint16_t aux, uint32_t desc,
              uint64_t start, uint64_t end, uint64_t val);
void tb_desc(tb_slots *s, uint8_t type, uint32_t id, const void *payload, uint16_t len);
void tb_string(tb_slots *s, uint32_t id, const char *text);
void tb_slots_free(tb_slots *s);

/* Write b to a new file under /tmp; returns a malloc'd path. */
char *tb_write_temp(const tb_buf *b, const char *tag);

#endif
