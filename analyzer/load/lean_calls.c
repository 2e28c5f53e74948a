/* A lean rank's NCCL calls, compact (lean_calls.h).  Per call, as varints:
 *   shape number
 *   seq - (its communicator's previous seq + 1)      (0 for the usual +1)
 *   start - the previous call's start
 *   end - start, gpu_start - start, gpu_end - gpu_start
 *   kernel - the previous call's kernel
 * the signed ones zig-zagged, every difference modulo 2^64. */
#include "lean_calls.h"

#include <stdlib.h>
#include <string.h>

#include "pack_buf.h"
#include "util/key_table.h"
#include "util/vec.h"

/* The call with its per-call values zeroed, padding included: the key of
 * its shape. */
static void shape_of(const tsa_nccl_op *o, tsa_nccl_op *s)
{
    memset(s, 0, sizeof *s);
    s->comm_id = o->comm_id;
    s->count = o->count;
    s->bytes = o->bytes;
    s->stream = o->stream;
    s->comm_rank = o->comm_rank;
    s->comm_size = o->comm_size;
    s->tid = o->tid;
    s->peer = o->peer;
    s->op = o->op;
    s->dtype = o->dtype;
    s->redop = o->redop;
    s->result = o->result;
    s->group_depth = o->group_depth;
    s->flags = o->flags;
}

static int put_call(tsa_bytes *b, const tsa_nccl_op *o, int64_t shape, uint64_t *last_seq,
                    int64_t *start, int64_t *kernel)
{
    int rc = tsa_bytes_varint(b, (uint64_t)shape) ||
             tsa_bytes_svarint(b, (int64_t)(o->seq - (*last_seq + 1))) ||
             tsa_bytes_svarint(b, tsa_wrap_sub(o->start_ns, *start)) ||
             tsa_bytes_svarint(b, tsa_wrap_sub(o->end_ns, o->start_ns)) ||
             tsa_bytes_svarint(b, tsa_wrap_sub(o->gpu_start_ns, o->start_ns)) ||
             tsa_bytes_svarint(b, tsa_wrap_sub(o->gpu_end_ns, o->gpu_start_ns)) ||
             tsa_bytes_svarint(b, (int64_t)o->kernel - *kernel);
    *last_seq = o->seq;
    *start = o->start_ns;
    *kernel = o->kernel;
    return rc ? -1 : 0;
}

tsa_lean_calls *tsa_lean_calls_encode(const tsa_nccl_op *calls, size_t n)
{
    tsa_lean_calls *lc = calloc(1, sizeof *lc);
    tsa_key_table shapes, comms;
    tsa_key_table_init(&shapes, sizeof(tsa_nccl_op));
    tsa_key_table_init(&comms, sizeof(uint64_t));
    size_t cap_sc = 0, n_ls = 0, cap_ls = 0;
    uint64_t *last_seq = NULL;  /* per communicator */
    int64_t start = 0, kernel = -1;
    int rc = lc ? 0 : -1;
    if (lc)
        tsa_seq_summary_init(&lc->seqs);
    for (size_t i = 0; i < n && !rc; i++) {
        tsa_nccl_op key;
        shape_of(&calls[i], &key);
        size_t known = shapes.n;
        int64_t s = tsa_key_table_put(&shapes, &key);
        if (s < 0) {
            rc = -1;
        } else if ((size_t)s == known) {   /* a new shape: number its communicator */
            size_t comms_known = comms.n;
            int64_t c = tsa_key_table_put(&comms, &calls[i].comm_id);
            rc = c < 0 || TSA_VEC_PUSH(lc->shape_comm, lc->n_shapes, cap_sc, (uint32_t)c) ||
                 ((size_t)c == comms_known && TSA_VEC_PUSH(last_seq, n_ls, cap_ls, UINT64_MAX));
        }
        if (!rc)
            rc = put_call(&lc->data, &calls[i], s, &last_seq[lc->shape_comm[s]], &start, &kernel);
        lc->n_unlinked += !rc && calls[i].kernel < 0;
        if (!rc)
            rc = tsa_seq_summary_add(&lc->seqs, &calls[i]);
    }
    free(last_seq);
    tsa_key_table_free(&comms);
    if (rc) {
        tsa_key_table_free(&shapes);
        tsa_lean_calls_free(lc);
        return NULL;
    }
    tsa_seq_summary_done(&lc->seqs);
    lc->n = n;
    lc->n_comms = n_ls;
    lc->shapes = (tsa_nccl_op *)shapes.keys;   /* taken: the table's keys are the shapes */
    tsa_key_table_drop_index(&shapes);
    tsa_bytes_shrink(&lc->data);
    return lc;
}

void tsa_lean_calls_free(tsa_lean_calls *lc)
{
    if (!lc)
        return;
    free(lc->shapes);
    free(lc->shape_comm);
    free(lc->data.p);
    tsa_seq_summary_free(&lc->seqs);
    free(lc);
}

int tsa_calls_cursor_open(tsa_calls_cursor *c, const tsa_lean_calls *lc)
{
    memset(c, 0, sizeof *c);
    c->lc = lc;
    c->p = lc->data.p;
    c->end = lc->data.p + lc->data.len;
    c->kernel = -1;
    c->last_seq = malloc((lc->n_comms ? lc->n_comms : 1) * sizeof *c->last_seq);
    if (!c->last_seq)
        return -1;
    for (size_t i = 0; i < lc->n_comms; i++)
        c->last_seq[i] = UINT64_MAX;
    return 0;
}

/* One varint with no bounds check: the caller made sure that a whole call
 * (at most CALL_MAX bytes) is left. */
static inline uint64_t get_unchecked(const unsigned char **p)
{
    const unsigned char *q = *p;
    uint64_t x = *q & 0x7f;
    if (*q++ & 0x80)
        for (unsigned shift = 7; shift < 70; shift += 7) {
            uint64_t b = *q++;
            x |= (b & 0x7f) << shift;
            if (!(b & 0x80))
                break;
        }
    *p = q;
    return x;
}

#define CALL_MAX 70 /* 7 varints of at most 10 bytes */

int tsa_calls_cursor_next(tsa_calls_cursor *c, tsa_nccl_op *o)
{
    const tsa_lean_calls *lc = c->lc;
    if (c->at == lc->n)
        return 0;
    uint64_t v[7];
    if (c->end - c->p >= CALL_MAX) {
        for (int k = 0; k < 7; k++)
            v[k] = get_unchecked(&c->p);
    } else {
        for (int k = 0; k < 7; k++)
            if (tsa_varint_get(&c->p, c->end, &v[k]))
                return -1;
    }
    if (v[0] >= lc->n_shapes)
        return -1;
    uint32_t comm = lc->shape_comm[v[0]];
    *o = lc->shapes[v[0]];
    o->seq = c->last_seq[comm] + 1 + (uint64_t)tsa_unzigzag(v[1]);
    o->start_ns = tsa_wrap_add(c->start, tsa_unzigzag(v[2]));
    o->end_ns = tsa_wrap_add(o->start_ns, tsa_unzigzag(v[3]));
    o->gpu_start_ns = tsa_wrap_add(o->start_ns, tsa_unzigzag(v[4]));
    o->gpu_end_ns = tsa_wrap_add(o->gpu_start_ns, tsa_unzigzag(v[5]));
    o->kernel = (int32_t)tsa_wrap_add(c->kernel, tsa_unzigzag(v[6]));
    c->last_seq[comm] = o->seq;
    c->start = o->start_ns;
    c->kernel = o->kernel;
    c->at++;
    return 1;
}

void tsa_calls_cursor_close(tsa_calls_cursor *c)
{
    free(c->last_seq);
    c->last_seq = NULL;
}

int tsa_lean_calls_decode(const tsa_lean_calls *lc, tsa_nccl_op *out)
{
    tsa_calls_cursor c;
    if (tsa_calls_cursor_open(&c, lc))
        return -1;
    int rc = 0;
    for (size_t i = 0; i < lc->n && !rc; i++)
        rc = tsa_calls_cursor_next(&c, &out[i]) == 1 ? 0 : -1;
    tsa_calls_cursor_close(&c);
    return rc;
}

int tsa_lean_calls_put(tsa_pack_buf *b, const tsa_lean_calls *lc)
{
    const tsa_seq_summary *s = &lc->seqs;
    return tsa_put_u64(b, lc->n) || tsa_put_u64(b, lc->n_comms) ||
                   tsa_put_u64(b, lc->n_unlinked) ||
                   tsa_put_arr(b, lc->shapes, lc->n_shapes, sizeof *lc->shapes) ||
                   tsa_put_arr(b, lc->shape_comm, lc->n_shapes, sizeof *lc->shape_comm) ||
                   tsa_put_arr(b, lc->data.p, lc->data.len, 1) ||
                   tsa_put_arr(b, s->comms, s->n_comms, sizeof *s->comms) ||
                   tsa_put_u64(b, (uint64_t)s->has_last) || tsa_put(b, &s->last, sizeof s->last)
               ? -1
               : 0;
}

/* Every shape names a communicator, and the bytes give exactly n calls;
 * counts what is kept about them (unlinked calls, sequenced ones). */
static int well_formed(tsa_lean_calls *lc)
{
    for (size_t s = 0; s < lc->n_shapes; s++)
        if (lc->shape_comm[s] >= lc->n_comms)
            return 0;
    tsa_calls_cursor c;
    if (tsa_calls_cursor_open(&c, lc))
        return 0;
    tsa_nccl_op o;
    int got;
    size_t unlinked = 0;
    int oom = 0;
    tsa_seq_summary_init(&lc->seqs);
    while (!oom && (got = tsa_calls_cursor_next(&c, &o)) == 1) {
        unlinked += o.kernel < 0;
        oom = tsa_seq_summary_add(&lc->seqs, &o);
    }
    tsa_seq_summary_done(&lc->seqs);
    int ok = !oom && got == 0 && c.p == c.end && unlinked == lc->n_unlinked;
    tsa_calls_cursor_close(&c);
    return ok;
}

tsa_lean_calls *tsa_lean_calls_get(tsa_cursor *c, int own)
{
    tsa_lean_calls *lc = calloc(1, sizeof *lc);
    if (!lc) {
        c->bad = 1;
        return NULL;
    }
    lc->n = tsa_get_u64(c);
    lc->n_comms = tsa_get_u64(c);
    lc->n_unlinked = tsa_get_u64(c);
    size_t n_sc = 0;
    lc->shapes = tsa_get_arr(c, &lc->n_shapes, sizeof *lc->shapes);
    lc->shape_comm = tsa_get_arr(c, &n_sc, sizeof *lc->shape_comm);
    lc->data.p = tsa_get_arr(c, &lc->data.len, 1);
    lc->data.cap = lc->data.len;
    tsa_seq_summary *s = &lc->seqs;
    s->comms = tsa_get_arr(c, &s->n_comms, sizeof *s->comms);
    s->cap = s->n_comms;
    s->has_last = (int)tsa_get_u64(c);
    tsa_get(c, &s->last, sizeof s->last);
    /* a count no byte string could hold is refused before any allocation */
    int ok = !c->bad && n_sc == lc->n_shapes && lc->n <= lc->data.len &&
             lc->n_comms <= lc->n_shapes;
    if (ok && !own) {   /* every call checked, the summary counted again */
        tsa_seq_summary_free(s);
        ok = well_formed(lc);
    }
    if (!ok) {
        c->bad = 1;
        tsa_lean_calls_free(lc);
        return NULL;
    }
    return lc;
}
