/* Opening a dump, validating its header, and walking its chunks with
 * resynchronisation after damage.  Payload contents are parsed in
 * reader_slots.c (EVENTS) and reader_meta.c (META/END). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crc32c.h"
#include "reader_internal.h"

#define RESYNC_WINDOW (64u * 1024u)
/* A header larger than this is damage, not a future minor version. */
#define MAX_HEADER_SIZE 4096u

/* Bytes read at `off` (short only at end of file or on an I/O error). */
static size_t src_read(tsr_file *f, uint64_t off, void *buf, size_t n)
{
    if (off >= f->size)
        return 0;
    if (n > f->size - off)
        n = (size_t)(f->size - off);
    if (f->mem) {
        memcpy(buf, f->mem + off, n);
        return n;
    }
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(f->fd, (char *)buf + got, n - got, (off_t)(off + got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    return got;
}

static tsr_file *file_new(const char *name, const tsr_callbacks *cb, void *ctx)
{
    tsr_file *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->path = strdup(name ? name : "(memory)");
    if (!f->path) {
        free(f);
        return NULL;
    }
    f->fd = -1;
    if (cb)
        f->cb = *cb;
    f->ctx = ctx;
    return f;
}

/* Validate the file header; on refusal report why and return -1. */
static int check_header(tsr_file *f)
{
    tsc_file_header *h = &f->hdr;
    size_t got = src_read(f, 0, h, sizeof *h);
    f->stats.file_size = f->size;
    if (got == 0) {
        tsr_problem(f, 0, "empty file, not a tscope dump");
        return -1;
    }
    if (got < sizeof h->magic || memcmp(h->magic, TSC_FILE_MAGIC, sizeof h->magic) != 0) {
        tsr_problem(f, 0, "not a tscope dump (bad magic)");
        return -1;
    }
    if (got < sizeof *h) {
        tsr_problem(f, 0, "file too short for a tscope header (%zu bytes)", got);
        return -1;
    }
    if (h->byte_order != TSC_BYTE_ORDER_MARK) {
        if (h->byte_order == __builtin_bswap32(TSC_BYTE_ORDER_MARK))
            tsr_problem(f, 0, "written with the opposite byte order; not readable here");
        else
            tsr_problem(f, 0, "bad byte-order mark 0x%08x", h->byte_order);
        return -1;
    }
    if (h->version_major != TSC_FORMAT_MAJOR) {
        tsr_problem(f, 0, "format version %u.%u not supported (this reader reads %u.x)",
                    h->version_major, h->version_minor, TSC_FORMAT_MAJOR);
        return -1;
    }
    if (h->header_size < sizeof *h || h->header_size > MAX_HEADER_SIZE ||
        h->header_size > f->size) {
        tsr_problem(f, 0, "bad header size %u (file is %llu bytes)", h->header_size,
                    (unsigned long long)f->size);
        return -1;
    }
    if (h->slot_size != TSC_SLOT_SIZE) {
        tsr_problem(f, 0, "slot size %u not supported (expected %u)", h->slot_size,
                    TSC_SLOT_SIZE);
        return -1;
    }
    uint32_t crc = tsc_crc32c(0, h, offsetof(tsc_file_header, header_crc));
    if (crc != h->header_crc) {
        tsr_problem(f, 0, "bad header CRC (stored 0x%08x, computed 0x%08x)", h->header_crc,
                    crc);
        return -1;
    }
    f->stats.version_major = h->version_major;
    f->stats.version_minor = h->version_minor;
    f->stats.pid = h->pid;
    f->stats.created_realtime_ns = h->created_realtime_ns;
    return 0;
}

static tsr_file *finish_open(tsr_file *f, int *status)
{
    if (check_header(f) != 0) {
        if (status)
            *status = TSR_UNREADABLE;
        tsr_close(f);
        return NULL;
    }
    if (status)
        *status = TSR_OK;
    return f;
}

tsr_file *tsr_open(const char *path, const tsr_callbacks *cb, void *ctx, int *status)
{
    if (status)
        *status = TSR_UNREADABLE;
    tsr_file *f = file_new(path, cb, ctx);
    if (!f)
        return NULL;
    struct stat st;
    f->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (f->fd < 0 || fstat(f->fd, &st) != 0) {
        tsr_problem(f, 0, "cannot open: %s", strerror(errno));
        tsr_close(f);
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        tsr_problem(f, 0, "not a regular file");
        tsr_close(f);
        return NULL;
    }
    f->size = (uint64_t)st.st_size;
    return finish_open(f, status);
}

tsr_file *tsr_open_buffer(const void *data, size_t len, const char *name,
                          const tsr_callbacks *cb, void *ctx, int *status)
{
    if (status)
        *status = TSR_UNREADABLE;
    tsr_file *f = file_new(name, cb, ctx);
    if (!f)
        return NULL;
    static const uint8_t empty[1];
    f->mem = data ? data : empty;
    f->size = data ? len : 0;
    return finish_open(f, status);
}

/* NULL when the chunk header at `off` is usable, else why not. */
static const char *chunk_header_error(const tsr_file *f, const tsc_chunk_header *h,
                                      uint64_t off, char *why, size_t cap)
{
    if (h->magic != TSC_CHUNK_MAGIC)
        return "no chunk header here (bad magic)";
    uint32_t crc = tsc_crc32c(0, h, offsetof(tsc_chunk_header, header_crc));
    if (crc != h->header_crc)
        return "bad chunk header CRC";
    if (h->payload_len > TSC_CHUNK_MAX_PAYLOAD) {
        snprintf(why, cap, "chunk payload length %u exceeds the limit of %u", h->payload_len,
                 TSC_CHUNK_MAX_PAYLOAD);
        return why;
    }
    uint64_t avail = f->size - off - sizeof *h;
    if (h->payload_len > avail) {
        snprintf(why, cap, "truncated %s chunk seq %u: payload %u bytes, %llu present",
                 tsr_chunk_type_name(h->type) ? tsr_chunk_type_name(h->type) : "unknown",
                 h->seq, h->payload_len, (unsigned long long)avail);
        return why;
    }
    return NULL;
}

/* Offset of the next chunk header with a valid CRC at or after `from`,
 * or the file size when there is none. */
static uint64_t resync(tsr_file *f, uint64_t from)
{
    uint8_t *win = malloc(RESYNC_WINDOW);
    if (!win)
        return f->size;
    const uint32_t magic = TSC_CHUNK_MAGIC;
    uint64_t pos = from;
    uint64_t found = f->size;
    while (pos + sizeof(tsc_chunk_header) <= f->size) {
        size_t n = src_read(f, pos, win, RESYNC_WINDOW);
        if (n < sizeof(tsc_chunk_header))
            break;
        size_t last = n - sizeof(tsc_chunk_header);
        for (size_t i = 0; i <= last; i++) {
            const uint8_t *p = memchr(win + i, (int)(magic & 0xff), last - i + 1);
            if (!p)
                break;
            i = (size_t)(p - win);
            tsc_chunk_header h;
            memcpy(&h, p, sizeof h);
            if (h.magic == magic &&
                tsc_crc32c(0, &h, offsetof(tsc_chunk_header, header_crc)) == h.header_crc) {
                found = pos + i;
                goto done;
            }
        }
        pos += last + 1;
    }
done:
    free(win);
    return found;
}

static const uint8_t *read_payload(tsr_file *f, uint64_t off, uint32_t len)
{
    if (f->mem)
        return f->mem + off;
    if (len > f->buf_cap) {
        uint8_t *b = realloc(f->buf, len);
        if (!b)
            return NULL;
        f->buf = b;
        f->buf_cap = len;
    }
    if (len == 0)
        return f->buf ? f->buf : (const uint8_t *)"";
    return src_read(f, off, f->buf, len) == len ? f->buf : NULL;
}

static void dispatch(tsr_file *f, const tsc_chunk_header *h, uint64_t poff,
                     const uint8_t *payload)
{
    f->stats.chunks++;
    /* The writer numbers chunks 0, 1, 2...; a jump means chunks were lost,
     * a step back that chunks were repeated or reordered.  Both are
     * problems, except a jump over chunks skipped as damaged (already
     * reported). */
    uint64_t want = f->next_seq;
    int skipped = f->stats.bad_chunks != f->bad_at_last_chunk;
    if (h->seq > want) {
        f->stats.missing_chunks += h->seq - want;
        if (!skipped)
            tsr_problem(f, poff - sizeof *h, "chunk seq %u where %llu was expected: "
                        "%llu chunks missing", h->seq, (unsigned long long)want,
                        (unsigned long long)(h->seq - want));
    } else if (h->seq < want) {
        tsr_problem(f, poff - sizeof *h, "chunk seq %u after seq %llu: repeated or out of order",
                    h->seq, (unsigned long long)(want - 1));
    }
    f->next_seq = (uint64_t)h->seq + 1;
    f->bad_at_last_chunk = f->stats.bad_chunks;
    if (h->type != TSC_CHUNK_STEPS)
        tsr_steps_settle(f); /* extras whose STEPS chunk did not come next */
    switch (h->type) {
    case TSC_CHUNK_META:
        f->stats.meta_chunks++;
        tsr_parse_meta(f, h, poff, payload);
        break;
    case TSC_CHUNK_END:
        f->stats.end_chunks++;
        f->stats.clean_end = 1;
        tsr_parse_meta(f, h, poff, payload);
        break;
    case TSC_CHUNK_EVENTS:
        f->stats.event_chunks++;
        tsr_parse_events(f, h, poff, payload);
        break;
    case TSC_CHUNK_STEPS:
        f->stats.step_chunks++;
        tsr_parse_steps(f, h, poff, payload);
        break;
    case TSC_CHUNK_STEP_EXTRA:
        f->stats.step_extra_chunks++;
        tsr_parse_step_extra(f, h, poff, payload);
        break;
    default:
        f->stats.unknown_chunks++;
        /* Newer minors may add chunk types; for ours it is a writer bug. */
        if (!f->unknown_chunk_seen && f->hdr.version_minor <= TSC_FORMAT_MINOR)
            tsr_problem(f, poff - sizeof *h,
                        "unknown chunk type %u skipped (further ones only counted)", h->type);
        f->unknown_chunk_seen = 1;
        break;
    }
}

/* Report the damage at `off` and return where reading resumes. */
static uint64_t skip_bad(tsr_file *f, uint64_t off, const char *why)
{
    uint64_t next = resync(f, off + 1);
    f->stats.bad_chunks++;
    f->stats.bytes_skipped += next - off;
    if (next < f->size)
        tsr_problem(f, off, "%s; skipped %llu bytes to the next chunk at offset %llu", why,
                    (unsigned long long)(next - off), (unsigned long long)next);
    else
        tsr_problem(f, off, "%s; ignored the last %llu bytes (no further chunk)", why,
                    (unsigned long long)(next - off));
    return next;
}

/* Following a file being written: a chunk whose header or payload is not
 * all there yet (its header, when present, checks out) is the writer's
 * next chunk, not damage. */
static int still_being_written(const tsr_file *f, const tsc_chunk_header *h, uint64_t off)
{
    if (!f->follow)
        return 0;
    if (f->size - off < sizeof *h)
        return 1;
    return h->magic == TSC_CHUNK_MAGIC &&
           tsc_crc32c(0, h, offsetof(tsc_chunk_header, header_crc)) == h->header_crc &&
           h->payload_len <= TSC_CHUNK_MAX_PAYLOAD &&
           h->payload_len > f->size - off - sizeof *h;
}

int tsr_read_all(tsr_file *f)
{
    if (!f)
        return TSR_UNREADABLE;
    uint64_t off = f->follow ? f->resume_off : f->hdr.header_size;
    char why[160];
    while (off < f->size) {
        tsc_chunk_header h;
        if (f->follow && f->size - off < sizeof h)
            break; /* the next chunk's header is on its way */
        if (f->size - off < sizeof h) {
            f->stats.bad_chunks++;
            f->stats.bytes_skipped += f->size - off;
            tsr_problem(f, off, "truncated chunk header (%llu bytes at end of file)",
                        (unsigned long long)(f->size - off));
            break;
        }
        if (src_read(f, off, &h, sizeof h) != sizeof h) {
            tsr_problem(f, off, "read error");
            break;
        }
        if (still_being_written(f, &h, off))
            break;
        const char *err = chunk_header_error(f, &h, off, why, sizeof why);
        if (err) {
            off = skip_bad(f, off, err);
            continue;
        }
        uint64_t poff = off + sizeof h;
        const uint8_t *payload = read_payload(f, poff, h.payload_len);
        if (!payload) {
            tsr_problem(f, off, "cannot read chunk payload (%u bytes)", h.payload_len);
            break;
        }
        if (tsc_crc32c(0, payload, h.payload_len) != h.payload_crc) {
            snprintf(why, sizeof why, "bad payload CRC in %s chunk seq %u (%u bytes)",
                     tsr_chunk_type_name(h.type) ? tsr_chunk_type_name(h.type) : "unknown",
                     h.seq, h.payload_len);
            off = skip_bad(f, off, why);
            continue;
        }
        dispatch(f, &h, poff, payload);
        off = poff + h.payload_len;
    }
    f->resume_off = off;
    if (!f->follow)
        tsr_steps_settle(f); /* the file ends: no STEPS chunk follows */
    if (f->stats.problems > TSR_MAX_PROBLEMS_REPORTED && f->cb.on_problem && !f->told_more) {
        f->told_more = f->follow;
        char msg[128];
        snprintf(msg, sizeof msg, "%llu further problems not shown",
                 (unsigned long long)(f->stats.problems - TSR_MAX_PROBLEMS_REPORTED));
        f->cb.on_problem(f->ctx, f->path, f->size, msg);
    }
    return f->stats.problems ? TSR_PROBLEMS : TSR_OK;
}

tsr_file *tsr_follow_open(const char *path, const tsr_callbacks *cb, void *ctx, int *status)
{
    tsr_file *f = tsr_open(path, cb, ctx, status);
    if (f) {
        f->follow = 1;
        f->resume_off = f->hdr.header_size;
    }
    return f;
}

int tsr_follow_read(tsr_file *f)
{
    struct stat st;
    if (!f || !f->follow)
        return TSR_UNREADABLE;
    if (fstat(f->fd, &st) == 0 && (uint64_t)st.st_size > f->size)
        f->size = (uint64_t)st.st_size;
    f->stats.file_size = f->size;
    return tsr_read_all(f);
}

void tsr_close(tsr_file *f)
{
    if (!f)
        return;
    if (f->fd >= 0)
        close(f->fd);
    tsr_desc_table_free(f);
    tsr_meta_free(f);
    tsr_steps_free(f);
    free(f->buf);
    free(f->path);
    free(f);
}

static int read_and_close(tsr_file *f, int status, tsr_stats *stats)
{
    if (!f) {
        if (stats) {
            memset(stats, 0, sizeof *stats);
            stats->problems = 1;
        }
        return status;
    }
    status = tsr_read_all(f);
    if (stats)
        *stats = f->stats;
    tsr_close(f);
    return status;
}

int tsr_read_file(const char *path, const tsr_callbacks *cb, void *ctx, tsr_stats *stats)
{
    int status;
    tsr_file *f = tsr_open(path, cb, ctx, &status);
    return read_and_close(f, status, stats);
}

int tsr_read_buffer(const void *data, size_t len, const char *name,
                    const tsr_callbacks *cb, void *ctx, tsr_stats *stats)
{
    int status;
    tsr_file *f = tsr_open_buffer(data, len, name, cb, ctx, &status);
    return read_and_close(f, status, stats);
}

const tsr_stats *tsr_file_stats(const tsr_file *f) { return f ? &f->stats : NULL; }
