/* Dump file writer: file header, self-checking chunks, metadata and slot
 * encoding.  Only write(2)/ftruncate(2) after open, so the chunk writer can
 * run from a signal handler (no allocation, no stdio). */
#include "dump_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "crc32c.h"

/* Host names go into file names: keep only characters that are safe in a
 * path component and in shell globs users will type. */
static void sanitize_host(char *out, size_t cap, const char *host)
{
    size_t n = 0;
    if (!host || !*host)
        host = "unknown";
    for (; *host && n + 1 < cap && n < 64; host++) {
        char c = *host;
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                 (c >= '0' && c <= '9') || c == '-' || c == '.';
        out[n++] = ok ? c : '-';
    }
    out[n] = '\0';
}

/* Writes all of buf, retrying short writes and EINTR.  Returns 0 or -errno. */
static int write_all_iov(int fd, struct iovec *iov, int iovcnt)
{
    while (iovcnt > 0) {
        ssize_t w = writev(fd, iov, iovcnt);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (w == 0)
            return -EIO;
        size_t left = (size_t)w;
        while (iovcnt > 0 && left >= iov->iov_len) {
            left -= iov->iov_len;
            iov++;
            iovcnt--;
        }
        if (iovcnt > 0) {
            iov->iov_base = (char *)iov->iov_base + left;
            iov->iov_len -= left;
        }
    }
    return 0;
}

static int write_header(tsc_dump *d, uint32_t pid, uint64_t created_realtime_ns)
{
    tsc_file_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, TSC_FILE_MAGIC, 8);
    h.version_major = TSC_FORMAT_MAJOR;
    h.version_minor = TSC_FORMAT_MINOR;
    h.header_size = sizeof h;
    h.byte_order = TSC_BYTE_ORDER_MARK;
    h.slot_size = TSC_SLOT_SIZE;
    h.created_realtime_ns = created_realtime_ns;
    h.pid = pid;
    h.header_crc = tsc_crc32c(0, &h, offsetof(tsc_file_header, header_crc));
    struct iovec iov = {&h, sizeof h};
    int rc = write_all_iov(d->fd, &iov, 1);
    if (rc == 0)
        d->bytes_written = sizeof h;
    return rc;
}

static void dump_reset(tsc_dump *d)
{
    memset(d, 0, sizeof *d);
    d->fd = -1;
}

static int open_excl(tsc_dump *d, const char *path, uint32_t pid, uint64_t created)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0)
        return -errno;
    d->fd = fd;
    snprintf(d->path, sizeof d->path, "%s", path);
    int rc = write_header(d, pid, created);
    if (rc < 0) {
        /* A file without a complete header is useless: remove it. */
        close(fd);
        unlink(path);
        d->fd = -1;
        d->last_errno = -rc;
        return rc;
    }
    return 0;
}

int tsc_dump_open_path(tsc_dump *d, const char *path, uint32_t pid,
                       uint64_t created_realtime_ns)
{
    dump_reset(d);
    if (!path || !*path || strlen(path) >= sizeof d->path)
        return -EINVAL;
    return open_excl(d, path, pid, created_realtime_ns);
}

int tsc_dump_open(tsc_dump *d, const char *dir, int rank, const char *host,
                  uint32_t pid, uint64_t created_realtime_ns)
{
    dump_reset(d);
    if (!dir || !*dir)
        dir = ".";
    if (mkdir(dir, 0777) < 0 && errno != EEXIST)
        return -errno;
    char h[72];
    sanitize_host(h, sizeof h, host);
    char rankbuf[16];
    if (rank < 0)
        snprintf(rankbuf, sizeof rankbuf, "x");
    else
        snprintf(rankbuf, sizeof rankbuf, "%d", rank);
    unsigned long long secs = created_realtime_ns / 1000000000ull;
    char path[sizeof d->path];
    /* Restarted or re-forked processes may reuse a pid within the same
     * second: never overwrite, take the next free suffix instead. */
    for (int n = 0; n < 1000; n++) {
        int len;
        if (n == 0)
            len = snprintf(path, sizeof path, "%s/tscope_r%s_%s_%u_%llu%s", dir,
                           rankbuf, h, pid, secs, TSC_DUMP_SUFFIX);
        else
            len = snprintf(path, sizeof path, "%s/tscope_r%s_%s_%u_%llu_%d%s", dir,
                           rankbuf, h, pid, secs, n, TSC_DUMP_SUFFIX);
        if (len < 0 || (size_t)len >= sizeof path)
            return -ENAMETOOLONG;
        int rc = open_excl(d, path, pid, created_realtime_ns);
        if (rc != -EEXIST)
            return rc;
    }
    return -EEXIST;
}

int tsc_dump_write_chunk(tsc_dump *d, uint16_t type, uint32_t tid,
                         const void *payload, uint32_t payload_len)
{
    uint64_t total = sizeof(tsc_chunk_header) + (uint64_t)payload_len;
    if (d->fd < 0) {
        d->bytes_lost += total;
        return -EBADF;
    }
    if (payload_len > TSC_CHUNK_MAX_PAYLOAD || (payload_len && !payload) ||
        (type == TSC_CHUNK_EVENTS && payload_len % TSC_SLOT_SIZE)) {
        d->bytes_lost += total;
        return -EINVAL;
    }
    tsc_chunk_header ch;
    memset(&ch, 0, sizeof ch);
    ch.magic = TSC_CHUNK_MAGIC;
    ch.type = type;
    ch.payload_len = payload_len;
    ch.payload_crc = tsc_crc32c(0, payload, payload_len);
    ch.tid = tid;
    ch.seq = d->next_seq;
    ch.header_crc = tsc_crc32c(0, &ch, offsetof(tsc_chunk_header, header_crc));
    struct iovec iov[2] = {{&ch, sizeof ch}, {(void *)payload, payload_len}};
    int rc = write_all_iov(d->fd, iov, payload_len ? 2 : 1);
    if (rc < 0) {
        /* Cut a torn chunk off so the next chunk starts where a reader
         * expects it; if that fails too the reader resynchronises. */
        if (ftruncate(d->fd, (off_t)d->bytes_written) == 0)
            lseek(d->fd, (off_t)d->bytes_written, SEEK_SET);
        d->bytes_lost += total;
        d->last_errno = -rc;
        return rc;
    }
    d->next_seq++;
    d->bytes_written += total;
    return 0;
}

size_t tsc_meta_encode(char *buf, size_t cap, const char *const *keys,
                       const char *const *values, size_t n)
{
    size_t off = 0;
    for (size_t i = 0; i < n; i++) {
        const char *k = keys[i] ? keys[i] : "";
        const char *v = values[i] ? values[i] : "";
        size_t kl = strlen(k), vl = strlen(v);
        if (kl == 0)
            continue; /* an empty key cannot be looked up: skip it */
        if (off + kl + 1 + vl + 1 > cap)
            return 0;
        memcpy(buf + off, k, kl + 1);
        off += kl + 1;
        memcpy(buf + off, v, vl + 1);
        off += vl + 1;
    }
    return off;
}

size_t tsc_encode_event(tsc_event *slots, size_t cap, uint8_t kind, uint8_t flags,
                        uint16_t aux, uint32_t desc, uint64_t start_ns,
                        uint64_t end_ns, uint64_t val)
{
    if (cap < 1 || kind == 0 || kind == TSC_EV_DESC)
        return 0;
    tsc_event *e = &slots[0];
    e->kind = kind;
    e->flags = flags;
    e->aux = aux;
    e->desc = desc;
    e->start_ns = start_ns;
    e->end_ns = end_ns;
    e->val = val;
    return 1;
}

size_t tsc_encode_desc(tsc_event *slots, size_t cap, uint8_t desc_type, uint32_t id,
                       const void *payload, uint16_t len)
{
    if (id == 0 || len > TSC_DESC_MAX_PAYLOAD || (len && !payload))
        return 0;
    size_t need = tsc_desc_slots(len);
    if (need > cap)
        return 0;
    memset(slots, 0, need * TSC_SLOT_SIZE);
    tsc_desc_head *h = (tsc_desc_head *)slots;
    h->kind = TSC_EV_DESC;
    h->type = desc_type;
    h->payload_len = len;
    h->id = id;
    size_t first = len < TSC_DESC_HEAD_PAYLOAD ? len : TSC_DESC_HEAD_PAYLOAD;
    if (first)
        memcpy(h->payload, payload, first);
    if (len > first)
        memcpy((unsigned char *)(slots + 1), (const unsigned char *)payload + first,
               len - first);
    return need;
}

void tsc_dump_close(tsc_dump *d)
{
    if (d->fd >= 0)
        close(d->fd);
    d->fd = -1;
}
