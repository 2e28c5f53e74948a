#include <stdlib.h>
#include <string.h>

#include "crc32c.h"
#include "reader/dump_reader.h"
#include "fuzz_exercise.h"
#include "reader/nccl_join.h"
#include "reader/record_json.h"

typedef struct fz {
    tsr_nccl_join join;
    uint64_t events, sink;
} fz;

static void sink_json(fz *z, cJSON *o)
{
    if (!o)
        return;
    char *s = cJSON_PrintUnformatted(o);
    if (s)
        z->sink += strlen(s);
    free(s);
    cJSON_Delete(o);
}

static void on_event(void *ctx, const tsr_file *f, const tsr_event *e)
{
    fz *z = ctx;
    z->events++;
    tsr_nccl_join_add(&z->join, e);
    const char *op = e->kind == TSC_EV_KERNEL ? tsr_nccl_join_kernel_op(&z->join, f, e) : NULL;
    sink_json(z, tsr_event_json(f, e, -1, op));
}

static void on_desc(void *ctx, const tsr_file *f, const tsr_desc *d)
{
    fz *z = ctx;
    union {
        tsc_desc_nccl_call n;
        tsc_desc_kernel k;
        tsc_desc_copy c;
        tsc_desc_sync s;
        tsc_desc_api a;
        tsc_desc_gemm g;
    } u;
    const char *s;
    size_t len;
    uint32_t tid;
    /* Every decoder on every descriptor: the mismatched ones must refuse. */
    z->sink += (uint64_t)tsr_decode_nccl_call(d, &u.n) + (uint64_t)tsr_decode_copy(d, &u.c) +
               (uint64_t)tsr_decode_sync(d, &u.s) + (uint64_t)tsr_decode_gemm(d, &u.g);
    if (tsr_decode_kernel(d, &u.k) == 0)
        z->sink += tsr_nccl_op_from_kernel_name(tsr_string(f, u.k.name)) != NULL;
    if (tsr_decode_api(d, &u.a) == 0 && tsr_string(f, u.a.name))
        z->sink += strlen(tsr_string(f, u.a.name));
    if (tsr_decode_thread(d, &tid, &s, &len) == 0 && len)
        z->sink += (uint8_t)s[len - 1];
    if (tsr_decode_string(d, &s, &len) == 0)
        z->sink += strlen(s) <= len;
    sink_json(z, tsr_desc_json(d, 0));
}

static void on_meta(void *ctx, const tsr_file *f, const char *k, const char *v, int end)
{
    fz *z = ctx;
    z->sink += tsr_meta(f, k) != NULL;
    sink_json(z, tsr_meta_json(0, k, v, end));
}

static void on_problem(void *ctx, const char *path, uint64_t off, const char *msg)
{
    fz *z = ctx;
    z->sink += strlen(path) + strlen(msg) + off;
}

int fuzz_exercise(const uint8_t *data, size_t len, uint64_t *events)
{
    fz z = {0};
    tsr_callbacks cb = {.on_meta = on_meta, .on_desc = on_desc, .on_event = on_event,
                        .on_problem = on_problem};
    tsr_stats st;
    int status = tsr_read_buffer(data, len, "fuzz", &cb, &z, &st);
    tsr_nccl_join_free(&z.join);
    if (events)
        *events = z.events;
    if (status != TSR_UNREADABLE && st.events != z.events)
        abort(); /* the stats must agree with what was delivered */
    return status;
}

void fuzz_fix_crcs(uint8_t *d, size_t len)
{
    tsc_file_header fh;
    if (len < sizeof fh)
        return;
    memcpy(&fh, d, sizeof fh);
    fh.header_crc = tsc_crc32c(0, &fh, offsetof(tsc_file_header, header_crc));
    memcpy(d, &fh, sizeof fh);
    size_t off = fh.header_size >= sizeof fh && fh.header_size < len ? fh.header_size : sizeof fh;
    while (off + sizeof(tsc_chunk_header) <= len) {
        tsc_chunk_header h;
        memcpy(&h, d + off, sizeof h);
        if (h.magic != TSC_CHUNK_MAGIC)
            return;
        size_t room = len - off - sizeof h;
        if (h.payload_len <= room)
            h.payload_crc = tsc_crc32c(0, d + off + sizeof h, h.payload_len);
        h.header_crc = tsc_crc32c(0, &h, offsetof(tsc_chunk_header, header_crc));
        memcpy(d + off, &h, sizeof h);
        if (h.payload_len > room)
            return;
        off += sizeof h + h.payload_len;
    }
}

uint64_t fuzz_rand(uint64_t *state)
{
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    return *state * 2685821657736338717ull;
}
