/* STEPS and STEP_EXTRA chunks of a black-box summary file (format 1.3,
 * 1.4; docs/format.md).  The writer puts a STEP_EXTRA chunk just before
 * the STEPS chunk of the same steps, so its records wait here for that
 * chunk and are then handed over beside the summaries they belong to,
 * matched by step number (never by position: a damaged file must not pair
 * a step with another's figures).  Records whose step that chunk does not
 * have, because it was lost or the file ends first, are counted and
 * ignored. */
#include <stdlib.h>
#include <string.h>

#include "reader_internal.h"

#define BATCH 256

static int by_step(const void *a, const void *b)
{
    uint64_t x = ((const tsc_step_extra *)a)->step, y = ((const tsc_step_extra *)b)->step;
    return (x > y) - (x < y);
}

void tsr_steps_settle(tsr_file *f)
{
    for (size_t i = 0; i < f->n_xpend; i++)
        f->stats.step_extras_orphaned += !f->xused[i];
    f->n_xpend = 0;
}

void tsr_steps_free(tsr_file *f)
{
    free(f->xpend);
    free(f->xused);
    f->xpend = NULL;
    f->xused = NULL;
    f->n_xpend = f->cap_xpend = 0;
}

/* The whole records of `size` bytes in chunk h; a tail is one problem. */
static size_t whole_records(tsr_file *f, const tsc_chunk_header *h, uint64_t poff, size_t size)
{
    if (h->payload_len % size)
        tsr_problem(f, poff, "%s chunk of %u bytes is not a whole number of %zu-byte records; "
                    "the tail is ignored", tsr_chunk_type_name(h->type), h->payload_len, size);
    return h->payload_len / size;
}

void tsr_parse_step_extra(tsr_file *f, const tsc_chunk_header *h, uint64_t poff,
                          const uint8_t *payload)
{
    size_t n = whole_records(f, h, poff, sizeof(tsc_step_extra));
    f->stats.step_extras += n;
    if (n > f->cap_xpend) {
        tsc_step_extra *x = realloc(f->xpend, n * sizeof *x);
        uint8_t *u = x ? realloc(f->xused, n) : NULL;
        if (x)
            f->xpend = x;
        if (!u) {
            f->stats.step_extras_orphaned += n; /* no memory: as if lost */
            return;
        }
        f->xused = u;
        f->cap_xpend = n;
    }
    memcpy(f->xpend, payload, n * sizeof *f->xpend);
    memset(f->xused, 0, n);
    f->n_xpend = n;
    for (size_t i = 1; i < n; i++)
        if (f->xpend[i].step < f->xpend[i - 1].step) { /* the writer's are in order */
            qsort(f->xpend, n, sizeof *f->xpend, by_step);
            break;
        }
}

/* The waiting record of step `step`, marked used, or NULL. */
static const tsc_step_extra *take_extra(tsr_file *f, uint64_t step)
{
    size_t lo = 0, hi = f->n_xpend;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (f->xpend[mid].step < step)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == f->n_xpend || f->xpend[lo].step != step)
        return NULL;
    f->xused[lo] = 1;
    return &f->xpend[lo];
}

/* A STEPS chunk: whole summaries only, handed over in aligned batches
 * with their extras. */
void tsr_parse_steps(tsr_file *f, const tsc_chunk_header *h, uint64_t poff,
                     const uint8_t *payload)
{
    size_t n = whole_records(f, h, poff, sizeof(tsc_step_summary));
    f->stats.steps += n;
    tsc_step_summary batch[BATCH];
    tsc_step_extra extra[BATCH];
    for (size_t i = 0; i < n;) {
        size_t k = n - i < BATCH ? n - i : BATCH;
        memcpy(batch, payload + i * sizeof batch[0], k * sizeof batch[0]);
        for (size_t j = 0; j < k; j++) {
            const tsc_step_extra *x = f->n_xpend ? take_extra(f, batch[j].step) : NULL;
            extra[j] = x ? *x : (tsc_step_extra){.step = batch[j].step};
        }
        if (f->cb.on_steps)
            f->cb.on_steps(f->ctx, f, batch, extra, k);
        i += k;
    }
    tsr_steps_settle(f);
}
