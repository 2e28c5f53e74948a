/* Writing one dump file: the file header, META/EVENTS/END chunks, and the
 * slot encoding of events and descriptors.  Used by the preload's background
 * writer and by test generators that write synthetic dumps "through the real
 * writer".  No allocation after tsc_dump_open; chunk writes use only
 * write(2), so they may run from a signal handler. */
#ifndef TSC_DUMP_FILE_H
#define TSC_DUMP_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "tsc_format.h"

typedef struct tsc_dump {
    int fd;                 /* -1 when closed or failed */
    uint32_t next_seq;      /* next chunk sequence number */
    uint64_t bytes_written;
    uint64_t bytes_lost;    /* chunks that failed to write (ENOSPC, EIO...) */
    int last_errno;         /* errno of the last failed write, 0 if none */
    char path[4096];
} tsc_dump;

/* Create `dir` if needed (one level) and a new file in it named
 *   tscope_r<rank>_<host>_<pid>_<unix seconds>[_<n>].tsd
 * (rank "x" when negative), never replacing an existing file (O_EXCL, with
 * a numeric suffix on collision).  Writes the file header.  Returns 0, or
 * -errno with d->fd == -1. */
int tsc_dump_open(tsc_dump *d, const char *dir, int rank, const char *host,
                  uint32_t pid, uint64_t created_realtime_ns);

/* Same, at an exact path (tests, generators). */
int tsc_dump_open_path(tsc_dump *d, const char *path, uint32_t pid,
                       uint64_t created_realtime_ns);

/* Append one chunk (header computed here).  Returns 0, or -errno; on error
 * the bytes are counted in bytes_lost and the file stays readable up to
 * the last complete chunk. */
int tsc_dump_write_chunk(tsc_dump *d, uint16_t type, uint32_t tid,
                         const void *payload, uint32_t payload_len);

/* Encode metadata pairs as a META (or END) chunk payload into buf.  Returns
 * the payload length, or 0 if it does not fit. */
size_t tsc_meta_encode(char *buf, size_t cap, const char *const *keys,
                       const char *const *values, size_t n);

/* Slot encoding.  Return the number of 32-byte slots written into `slots`
 * (capacity `cap` slots), 0 if it does not fit. */
size_t tsc_encode_event(tsc_event *slots, size_t cap, uint8_t kind, uint8_t flags,
                        uint16_t aux, uint32_t desc, uint64_t start_ns,
                        uint64_t end_ns, uint64_t val);
size_t tsc_encode_desc(tsc_event *slots, size_t cap, uint8_t desc_type, uint32_t id,
                       const void *payload, uint16_t len);

/* Slots a descriptor of `len` payload bytes occupies. */
static inline size_t tsc_desc_slots(uint16_t len)
{
    return len <= TSC_DESC_HEAD_PAYLOAD
               ? 1
               : 1 + (len - TSC_DESC_HEAD_PAYLOAD + TSC_SLOT_SIZE - 1) / TSC_SLOT_SIZE;
}

void tsc_dump_close(tsc_dump *d);

#endif
