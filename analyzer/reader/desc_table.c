/* The per-file descriptor table: id -> descriptor, open addressing over an
 * arena.  Its size is bounded by the file (every descriptor occupies its
 * own bytes in the dump), so no separate cap is needed. */
#include <stdlib.h>
#include <string.h>

#include "reader_internal.h"

#define ARENA_BLOCK (64u * 1024u)

void *tsr_arena_alloc(tsr_file *f, size_t n)
{
    n = (n + 7u) & ~(size_t)7u;
    tsr_arena_block *b = f->arena;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > ARENA_BLOCK ? n : ARENA_BLOCK;
        b = malloc(sizeof *b + cap);
        if (!b)
            return NULL;
        b->cap = cap;
        b->used = 0;
        b->next = f->arena;
        f->arena = b;
    }
    void *p = b->data + b->used;
    b->used += n;
    return p;
}

static size_t slot_of(uint32_t id, size_t mask)
{
    /* Ids are mostly small consecutive integers: multiply to spread them. */
    return (size_t)((id * 2654435761u) & mask);
}

static int grow(tsr_file *f)
{
    size_t n = f->n_slots ? f->n_slots * 2 : 256;
    const tsr_desc **s = calloc(n, sizeof *s);
    if (!s)
        return -1;
    for (size_t i = 0; i < f->n_slots; i++) {
        const tsr_desc *d = f->slots[i];
        if (!d)
            continue;
        size_t j = slot_of(d->id, n - 1);
        while (s[j])
            j = (j + 1) & (n - 1);
        s[j] = d;
    }
    free(f->slots);
    f->slots = s;
    f->n_slots = n;
    return 0;
}

const tsr_desc *tsr_desc_lookup(const tsr_file *f, uint32_t id)
{
    if (!f || !f->n_slots || id == 0)
        return NULL;
    size_t mask = f->n_slots - 1;
    for (size_t j = slot_of(id, mask);; j = (j + 1) & mask) {
        const tsr_desc *d = f->slots[j];
        if (!d)
            return NULL;
        if (d->id == id)
            return d;
    }
}

const tsr_desc *tsr_desc_add(tsr_file *f, const tsr_desc *in)
{
    if ((f->n_descs + 1) * 2 > f->n_slots && grow(f) != 0)
        return NULL;
    tsr_desc *d = tsr_arena_alloc(f, sizeof *d);
    uint8_t *p = d ? tsr_arena_alloc(f, (size_t)in->len + 1) : NULL;
    if (!p)
        return NULL;
    memcpy(p, in->payload, in->len);
    p[in->len] = 0;
    *d = *in;
    d->payload = p;
    size_t mask = f->n_slots - 1;
    size_t j = slot_of(d->id, mask);
    while (f->slots[j])
        j = (j + 1) & mask;
    f->slots[j] = d;
    f->n_descs++;
    return d;
}

void tsr_desc_table_free(tsr_file *f)
{
    while (f->arena) {
        tsr_arena_block *next = f->arena->next;
        free(f->arena);
        f->arena = next;
    }
    free(f->slots);
    f->slots = NULL;
    f->n_slots = f->n_descs = 0;
}

const char *tsr_string(const tsr_file *f, uint32_t id)
{
    const tsr_desc *d = tsr_desc_lookup(f, id);
    return d && d->type == TSC_DESC_STRING ? (const char *)d->payload : NULL;
}
