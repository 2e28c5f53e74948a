/* META and END chunk payloads: key\0value\0 pairs; later values override. */
#include <stdlib.h>
#include <string.h>

#include "reader_internal.h"
#include "util/vec.h"

/* Hashed key index (positions + 1; 0 = empty), sized for the key cap, so a
 * hostile chunk of millions of pairs costs O(pairs), not O(pairs * keys). */
#define INDEX_SIZE (2 * TSR_MAX_META_KEYS)

static size_t hash_key(const char *k)
{
    size_t h = 2166136261u;
    while (*k)
        h = (h ^ (unsigned char)*k++) * 16777619u;
    return h & (INDEX_SIZE - 1);
}

/* Index position holding `key`, or the empty position where it would go. */
static size_t find(const tsr_file *f, const char *key)
{
    size_t j = hash_key(key);
    while (f->meta_index[j] && strcmp(f->meta[f->meta_index[j] - 1].key, key) != 0)
        j = (j + 1) & (INDEX_SIZE - 1);
    return j;
}

/* 0 stored, 1 dropped (too many keys), -1 out of memory. */
static int store(tsr_file *f, const char *key, const char *value)
{
    if (!f->meta_index && !(f->meta_index = calloc(INDEX_SIZE, sizeof *f->meta_index)))
        return -1;
    size_t j = find(f, key);
    if (f->meta_index[j]) {
        tsr_meta_pair *m = &f->meta[f->meta_index[j] - 1];
        char *v = strdup(value);
        if (!v)
            return -1;
        free(m->value);
        m->value = v;
        return 0;
    }
    if (f->n_meta >= TSR_MAX_META_KEYS)
        return 1;
    if (tsa_vec_reserve((void **)&f->meta, &f->cap_meta, f->n_meta, sizeof *f->meta))
        return -1;
    char *k = strdup(key), *v = strdup(value);
    if (!k || !v) {
        free(k);
        free(v);
        return -1;
    }
    f->meta[f->n_meta].key = k;
    f->meta[f->n_meta].value = v;
    f->n_meta++;
    f->meta_index[j] = (uint32_t)f->n_meta;
    return 0;
}

void tsr_parse_meta(tsr_file *f, const tsc_chunk_header *h, uint64_t poff,
                    const uint8_t *payload)
{
    const char *p = (const char *)payload;
    const char *end = p + h->payload_len;
    int is_end = h->type == TSC_CHUNK_END;
    int warned_cap = 0;
    while (p < end) {
        uint64_t at = poff + (uint64_t)(p - (const char *)payload);
        const char *knul = memchr(p, 0, (size_t)(end - p));
        if (!knul) {
            tsr_problem(f, at, "metadata key without a terminating NUL");
            return;
        }
        const char *value = knul + 1;
        const char *vnul = value < end ? memchr(value, 0, (size_t)(end - value)) : NULL;
        if (!vnul) {
            tsr_problem(f, at, "metadata key '%.64s' without a terminated value", p);
            return;
        }
        if (knul == p) {
            tsr_problem(f, at, "empty metadata key (value '%.64s') ignored", value);
        } else {
            int r = store(f, p, value);
            if (r < 0) {
                tsr_problem(f, at, "out of memory storing metadata");
                return;
            }
            if (r > 0 && !warned_cap) {
                tsr_problem(f, at, "more than %u metadata keys; further new keys not kept",
                            TSR_MAX_META_KEYS);
                warned_cap = 1;
            }
            if (f->cb.on_meta)
                f->cb.on_meta(f->ctx, f, p, value, is_end);
        }
        p = vnul + 1;
    }
}

const char *tsr_meta(const tsr_file *f, const char *key)
{
    if (!f || !key || !f->meta_index)
        return NULL;
    size_t j = find(f, key);
    return f->meta_index[j] ? f->meta[f->meta_index[j] - 1].value : NULL;
}

void tsr_meta_free(tsr_file *f)
{
    for (size_t i = 0; i < f->n_meta; i++) {
        free(f->meta[i].key);
        free(f->meta[i].value);
    }
    free(f->meta);
    free(f->meta_index);
    f->meta = NULL;
    f->meta_index = NULL;
    f->n_meta = f->cap_meta = 0;
}

size_t tsr_meta_count(const tsr_file *f)
{
    return f ? f->n_meta : 0;
}

int tsr_meta_at(const tsr_file *f, size_t i, const char **key, const char **value)
{
    if (!f || i >= f->n_meta)
        return -1;
    if (key)
        *key = f->meta[i].key;
    if (value)
        *value = f->meta[i].value;
    return 0;
}
