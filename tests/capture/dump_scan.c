#include "dump_scan.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crc32c.h"

/* Chunk payloads sit at arbitrary file offsets (META payloads have any
 * length): slots are read from an aligned copy. */
static void index_events(dump_scan *s, const tsc_chunk_header *ch, const unsigned char *raw)
{
    unsigned char *p = malloc(ch->payload_len ? ch->payload_len : 1);
    memcpy(p, raw, ch->payload_len);
    s->copies[s->ncopies++] = p;
    size_t n = ch->payload_len / TSC_SLOT_SIZE;
    for (size_t i = 0; i < n;) {
        const tsc_event *e = (const tsc_event *)(p + i * TSC_SLOT_SIZE);
        if (e->kind == TSC_EV_DESC) {
            const tsc_desc_head *h = (const tsc_desc_head *)e;
            size_t k = 1;
            if (h->payload_len > TSC_DESC_MAX_PAYLOAD ||
                (k = h->payload_len <= 24 ? 1 : 1 + (h->payload_len - 24 + 31) / 32) > n - i) {
                s->bad_layout++;
                return;
            }
            if (s->ndescs < SCAN_MAX_DESCS)
                s->descs[s->ndescs++] = (scan_desc){ch->tid, h->type, h->id, h->payload_len,
                                                    h->payload};
            i += k;
        } else {
            if (s->nevents < SCAN_MAX_EVENTS)
                s->events[s->nevents++] = (scan_event){ch->tid, *e};
            i++;
        }
    }
}

int dump_scan_load(dump_scan *s, const char *path)
{
    memset(s, 0, sizeof *s);
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    s->data = malloc(sz > 0 ? (size_t)sz : 1);
    s->size = fread(s->data, 1, (size_t)sz, f);
    fclose(f);
    s->events = calloc(SCAN_MAX_EVENTS, sizeof *s->events);
    s->descs = calloc(SCAN_MAX_DESCS, sizeof *s->descs);
    tsc_file_header h;
    if (s->size < sizeof h)
        return -1;
    memcpy(&h, s->data, sizeof h);
    if (memcmp(h.magic, TSC_FILE_MAGIC, 8) || h.header_size != sizeof h ||
        h.header_crc != tsc_crc32c(0, s->data, offsetof(tsc_file_header, header_crc)))
        return -1;
    size_t off = sizeof h;
    while (off + sizeof(tsc_chunk_header) <= s->size && s->nchunks < SCAN_MAX_CHUNKS) {
        tsc_chunk_header ch;
        memcpy(&ch, s->data + off, sizeof ch);
        if (ch.magic != TSC_CHUNK_MAGIC ||
            ch.header_crc != tsc_crc32c(0, &ch, offsetof(tsc_chunk_header, header_crc)) ||
            off + sizeof ch + ch.payload_len > s->size) {
            s->bad_crc++;
            break;
        }
        const unsigned char *p = s->data + off + sizeof ch;
        if (ch.payload_crc != tsc_crc32c(0, p, ch.payload_len)) {
            s->bad_crc++;
            break;
        }
        if (ch.seq != s->nchunks)
            s->bad_layout++;
        s->chunk_off[s->nchunks] = off;
        s->chunks[s->nchunks++] = ch;
        if (ch.type == TSC_CHUNK_EVENTS)
            index_events(s, &ch, p);
        if (ch.type == TSC_CHUNK_END)
            s->end_chunks++;
        off += sizeof ch + ch.payload_len;
    }
    if (off != s->size)
        s->bad_layout++;
    return 0;
}

void dump_scan_free(dump_scan *s)
{
    for (size_t i = 0; i < s->ncopies; i++)
        free(s->copies[i]);
    free(s->data);
    free(s->events);
    free(s->descs);
    memset(s, 0, sizeof *s);
}

const char *dump_scan_meta(const dump_scan *s, const char *key)
{
    const char *found = NULL;
    for (size_t c = 0; c < s->nchunks; c++) {
        const tsc_chunk_header *ch = &s->chunks[c];
        if (ch->type != TSC_CHUNK_META && ch->type != TSC_CHUNK_END)
            continue;
        const char *p = (const char *)s->data + s->chunk_off[c] + sizeof *ch;
        const char *end = p + ch->payload_len;
        while (p < end) {
            const char *k = p;
            const char *v = k + strlen(k) + 1;
            if (v >= end)
                break;
            if (!strcmp(k, key))
                found = v;
            p = v + strlen(v) + 1;
        }
    }
    return found;
}

const scan_desc *dump_scan_desc(const dump_scan *s, uint32_t id)
{
    for (size_t i = 0; i < s->ndescs; i++)
        if (s->descs[i].id == id)
            return &s->descs[i];
    return NULL;
}

int dump_scan_count_files(const char *dir, char *first, size_t cap)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l > 4 && !strcmp(e->d_name + l - 4, ".tsd")) {
            if (n == 0 && first)
                snprintf(first, cap, "%s/%s", dir, e->d_name);
            n++;
        }
    }
    closedir(d);
    return n;
}
