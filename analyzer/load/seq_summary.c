/* A rank's sequenced calls per communicator (seq_summary.h). */
#include "seq_summary.h"

#include <stdlib.h>
#include <string.h>

#include "tsc_format.h"
#include "util/vec.h"

void tsa_seq_summary_init(tsa_seq_summary *s)
{
    memset(s, 0, sizeof *s);
    tsa_key_table_init(&s->index, sizeof(uint64_t));
}

int tsa_seq_summary_add(tsa_seq_summary *s, const tsa_nccl_op *o)
{
    if (!tsc_nccl_op_is_sequenced(o->op))
        return 0;
    s->last = *o;
    s->has_last = 1;
    size_t known = s->index.n;
    int64_t c = tsa_key_table_put(&s->index, &o->comm_id);
    if (c < 0)
        return -1;
    if ((size_t)c == known) {
        tsa_comm_seqs first;
        memset(&first, 0, sizeof first);   /* padding too: the entries are shipped as bytes */
        first.comm_id = o->comm_id;
        first.first_seq = first.last_seq = o->seq;
        first.top = -1;
        first.ordered = 1;
        if (TSA_VEC_PUSH(s->comms, s->n_comms, s->cap, first))
            return -1;
    }
    tsa_comm_seqs *e = &s->comms[c];
    e->ordered &= o->seq >= e->last_seq;
    e->last_seq = o->seq;
    if ((int64_t)o->seq > e->top)
        e->top = (int64_t)o->seq;
    e->calls++;
    return 0;
}

void tsa_seq_summary_done(tsa_seq_summary *s)
{
    tsa_key_table_free(&s->index);
}

void tsa_seq_summary_free(tsa_seq_summary *s)
{
    tsa_key_table_free(&s->index);
    free(s->comms);
    memset(s, 0, sizeof *s);
}

const tsa_comm_seqs *tsa_seq_summary_comm(const tsa_seq_summary *s, uint64_t comm_id)
{
    for (size_t i = 0; i < s->n_comms; i++)
        if (s->comms[i].comm_id == comm_id)
            return &s->comms[i];
    return NULL;
}
