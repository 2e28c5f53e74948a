#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crc32c.h"
#include "dump_builder.h"

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n);
    if (!q) {
        fprintf(stderr, "out of memory in test builder\n");
        abort();
    }
    return q;
}

void tb_free(tb_buf *b)
{
    free(b->data);
    *b = (tb_buf){0};
}

void tb_append(tb_buf *b, const void *p, size_t n)
{
    if (b->len + n > b->cap) {
        b->cap = (b->len + n) * 2 + 64;
        b->data = xrealloc(b->data, b->cap);
    }
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
}

void tb_header(tb_buf *b, uint64_t created_ns, uint32_t pid)
{
    tsc_file_header h = {0};
    memcpy(h.magic, TSC_FILE_MAGIC, 8);
    h.version_major = TSC_FORMAT_MAJOR;
    h.version_minor = TSC_FORMAT_MINOR;
    h.header_size = sizeof h;
    h.byte_order = TSC_BYTE_ORDER_MARK;
    h.slot_size = TSC_SLOT_SIZE;
    h.created_realtime_ns = created_ns;
    h.pid = pid;
    h.header_crc = tsc_crc32c(0, &h, offsetof(tsc_file_header, header_crc));
    tb_append(b, &h, sizeof h);
}

void tb_fix_header_crc(tb_buf *b)
{
    tsc_file_header h;
    memcpy(&h, b->data, sizeof h);
    h.header_crc = tsc_crc32c(0, &h, offsetof(tsc_file_header, header_crc));
    memcpy(b->data, &h, sizeof h);
}

size_t tb_chunk(tb_buf *b, uint16_t type, uint32_t tid, uint32_t seq, const void *payload,
                uint32_t len)
{
    tsc_chunk_header h = {.magic = TSC_CHUNK_MAGIC, .type = type, .payload_len = len,
                          .payload_crc = tsc_crc32c(0, payload, len), .tid = tid, .seq = seq};
    h.header_crc = tsc_crc32c(0, &h, offsetof(tsc_chunk_header, header_crc));
    size_t off = b->len;
    tb_append(b, &h, sizeof h);
    tb_append(b, payload, len);
    return off;
}

void tb_fix_chunk_crc(tb_buf *b, size_t off)
{
    tsc_chunk_header h;
    memcpy(&h, b->data + off, sizeof h);
    h.header_crc = tsc_crc32c(0, &h, offsetof(tsc_chunk_header, header_crc));
    memcpy(b->data + off, &h, sizeof h);
}

size_t tb_meta(char *out, size_t cap, const char *const *kv)
{
    size_t n = 0;
    for (; *kv; kv++) {
        size_t l = strlen(*kv) + 1;
        if (n + l > cap)
            abort();
        memcpy(out + n, *kv, l);
        n += l;
    }
    return n;
}

static tsc_event *more(tb_slots *s, size_t k)
{
    if (s->n + k > s->cap) {
        s->cap = (s->n + k) * 2 + 8;
        s->s = xrealloc(s->s, s->cap * sizeof *s->s);
    }
    tsc_event *p = s->s + s->n;
    memset(p, 0, k * sizeof *p);
    s->n += k;
    return p;
}

void tb_event(tb_slots *s, uint8_t kind, uint8_t flags, uint16_t aux, uint32_t desc,
              uint64_t start, uint64_t end, uint64_t val)
{
    tsc_event *e = more(s, 1);
    *e = (tsc_event){.kind = kind, .flags = flags, .aux = aux, .desc = desc,
                     .start_ns = start, .end_ns = end, .val = val};
}

void tb_desc(tb_slots *s, uint8_t type, uint32_t id, const void *payload, uint16_t len)
{
    size_t k = 1;
    if (len > TSC_DESC_HEAD_PAYLOAD)
        k += (len - TSC_DESC_HEAD_PAYLOAD + TSC_SLOT_SIZE - 1) / TSC_SLOT_SIZE;
    tsc_event *p = more(s, k);
    tsc_desc_head h = {.kind = TSC_EV_DESC, .type = type, .payload_len = len, .id = id};
    memcpy(p, &h, sizeof h);
    memcpy((uint8_t *)p + offsetof(tsc_desc_head, payload), payload, len);
}

void tb_string(tb_slots *s, uint32_t id, const char *text)
{
    tb_desc(s, TSC_DESC_STRING, id, text, (uint16_t)strlen(text));
}

void tb_slots_free(tb_slots *s)
{
    free(s->s);
    *s = (tb_slots){0};
}

char *tb_write_temp(const tb_buf *b, const char *tag)
{
    char *path = NULL;
    if (asprintf(&path, "/tmp/tsr_test_%d_%s.tsd", (int)getpid(), tag) < 0)
        abort();
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(b->data, 1, b->len, f) != b->len || fclose(f) != 0)
        abort();
    return path;
}
