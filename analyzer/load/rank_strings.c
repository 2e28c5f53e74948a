/* Interned names of a rank (tsa_rank.strings): each distinct string is
 * stored once and named by its index. */
#include "rank_strings.h"

#include <stdlib.h>
#include <string.h>

#include "util/vec.h"
#include "util/hash.h"

typedef struct string_index {
    uint32_t *slots;   /* string index + 1, 0 empty */
    size_t cap;        /* power of two */
} string_index;

static int index_rehash(tsa_rank *r, size_t cap)
{
    string_index *ix = r->string_index;
    uint32_t *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return -1;
    for (size_t i = 0; i < r->n_strings; i++) {
        size_t h = tsa_name_hash(r->strings[i], strlen(r->strings[i])) & (cap - 1);
        while (slots[h])
            h = (h + 1) & (cap - 1);
        slots[h] = (uint32_t)i + 1;
    }
    free(ix->slots);
    ix->slots = slots;
    ix->cap = cap;
    return 0;
}

uint32_t tsa_rank_intern_n(tsa_rank *r, const char *s, size_t len)
{
    if (!s)
        s = "", len = 0;
    if (!r->string_index) {
        r->string_index = calloc(1, sizeof(string_index));
        if (!r->string_index || index_rehash(r, 64))
            return UINT32_MAX;
    }
    string_index *ix = r->string_index;
    uint64_t hv = tsa_name_hash(s, len);
    size_t h = hv & (ix->cap - 1);
    while (ix->slots[h]) {
        const char *cand = r->strings[ix->slots[h] - 1];
        if (strlen(cand) == len && !memcmp(cand, s, len))
            return ix->slots[h] - 1;
        h = (h + 1) & (ix->cap - 1);
    }
    if (r->n_strings >= UINT32_MAX - 1)
        return UINT32_MAX;
    if (tsa_grow((void **)&r->strings, r->n_strings, &r->cap_strings, sizeof *r->strings))
        return UINT32_MAX;
    char *copy = malloc(len + 1);
    if (!copy)
        return UINT32_MAX;
    memcpy(copy, s, len);
    copy[len] = 0;
    uint32_t idx = (uint32_t)r->n_strings;
    r->strings[r->n_strings++] = copy;
    ix->slots[h] = idx + 1;
    if (r->n_strings * 2 > ix->cap && index_rehash(r, ix->cap * 2))
        return UINT32_MAX;
    return idx;
}

uint32_t tsa_rank_intern(tsa_rank *r, const char *s)
{
    return tsa_rank_intern_n(r, s, s ? strlen(s) : 0);
}

const char *tsa_rank_string(const tsa_rank *r, uint32_t idx)
{
    return idx < r->n_strings && r->strings[idx] ? r->strings[idx] : "";
}

void tsa_rank_strings_free(tsa_rank *r)
{
    for (size_t i = 0; i < r->n_strings; i++)
        free(r->strings[i]);
    free(r->strings);
    if (r->string_index) {
        free(((string_index *)r->string_index)->slots);
        free(r->string_index);
    }
}
