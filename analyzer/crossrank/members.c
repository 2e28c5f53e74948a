/* The cross-rank pass's members, compact.  An instance's members follow
 * each other in rank order, each as varints:
 *   rank - the previous member's rank - 1   (0 for the next rank: one byte)
 *   arrive - the previous member's arrive   (ranks arrive within micro-
 *                                            to milliseconds of each other)
 *   end - arrive
 *   gap + 1, 0 when unknown
 * on each rank's own clock; xr_members adds the rank's clock offset once
 * the clocks are aligned (the bytes are never rewritten).
 *
 * The ranks are placed one after the other, so every instance grows at
 * once: each in a chain of 4 KiB blocks (a block: the next block's number
 * + 1, the bytes used, then whole members), carved from 4 MiB arenas.  A
 * chain's last block is partly empty: ~2 KiB an instance. */
#include <stdlib.h>
#include <string.h>

#include "util/varint.h"
#include "xr_internal.h"

#define BLOCK 4096u
#define HEAD 8u                         /* uint32 next, uint32 used */
#define PER_ARENA 1024u
#define MEMBER_MAX 40u                  /* 4 varints of at most 10 bytes */

static unsigned char *block_at(const struct xr_blocks *b, uint32_t id)
{
    uint32_t k = id - 1;
    return b->arena[k / PER_ARENA] + (size_t)(k % PER_ARENA) * BLOCK;
}

static void get_u32(const unsigned char *p, uint32_t *v)
{
    memcpy(v, p, sizeof *v);
}

static void set_u32(unsigned char *p, uint32_t v)
{
    memcpy(p, &v, sizeof v);
}

/* A new empty block: its number + 1, 0 when out of memory. */
static uint32_t block_new(struct xr_blocks *b)
{
    if (b->n_blocks == UINT32_MAX - 1)
        return 0;
    if (b->n_blocks % PER_ARENA == 0) {
        unsigned char **grown = realloc(b->arena, (b->n_arenas + 1) * sizeof *grown);
        if (!grown)
            return 0;
        b->arena = grown;
        if (!(b->arena[b->n_arenas] = malloc((size_t)PER_ARENA * BLOCK)))
            return 0;
        b->n_arenas++;
    }
    uint32_t id = ++b->n_blocks;
    unsigned char *p = block_at(b, id);
    set_u32(p, 0);
    set_u32(p + 4, HEAD);
    return id;
}

int xr_member_add(struct xr_blocks *b, uint32_t *first, uint32_t *last, const xr_member *m,
                  const xr_member *prev)
{
    uint32_t used = 0;
    if (*last)
        get_u32(block_at(b, *last) + 4, &used);
    if (!*last || used + MEMBER_MAX > BLOCK) {
        uint32_t id = block_new(b);
        if (!id)
            return -1;
        if (*last)
            set_u32(block_at(b, *last), id);
        else
            *first = id;
        *last = id;
        used = HEAD;
    }
    unsigned char *blk = block_at(b, *last);
    tsa_bytes out = {blk + used, 0, MEMBER_MAX};
    tsa_bytes_varint(&out, (uint64_t)((int64_t)m->rank - prev->rank - 1));
    tsa_bytes_svarint(&out, tsa_wrap_sub(m->arrive, prev->arrive));
    tsa_bytes_svarint(&out, tsa_wrap_sub(m->end, m->arrive));
    tsa_bytes_varint(&out, m->gap == XR_GAP_UNKNOWN ? 0 : (uint64_t)m->gap + 1);
    set_u32(blk + 4, used + (uint32_t)out.len);
    return 0;
}

void xr_members(const xr_ctx *c, const xr_instance *in, xr_member *out)
{
    const struct xr_blocks *b = &c->blocks;
    uint32_t id = in->first, used = HEAD;
    const unsigned char *blk = NULL, *p = NULL, *end = NULL;
    xr_member prev = {.rank = -1};
    for (uint32_t j = 0; j < in->n; j++) {
        while (p == end) {  /* the chain's next block */
            if (blk)
                get_u32(blk, &id);
            blk = block_at(b, id);
            get_u32(blk + 4, &used);
            p = blk + HEAD;
            end = blk + used;
        }
        uint64_t drank, gap;
        int64_t darrive, dend;
        /* bytes this pass wrote itself: no damaged input can reach them */
        tsa_varint_get(&p, end, &drank);
        tsa_svarint_get(&p, end, &darrive);
        tsa_svarint_get(&p, end, &dend);
        tsa_varint_get(&p, end, &gap);
        xr_member *m = &out[j];
        m->rank = (int32_t)(prev.rank + 1 + (int64_t)drank);
        m->arrive = tsa_wrap_add(prev.arrive, darrive);
        m->end = tsa_wrap_add(m->arrive, dend);
        m->gap = gap ? (int64_t)(gap - 1) : XR_GAP_UNKNOWN;
        prev = *m;
        if (c->aligned) {
            m->arrive += c->offset[m->rank];
            m->end += c->offset[m->rank];
        }
    }
}

void xr_blocks_free(struct xr_blocks *b)
{
    for (size_t i = 0; i < b->n_arenas; i++)
        free(b->arena[i]);
    free(b->arena);
    memset(b, 0, sizeof *b);
}
