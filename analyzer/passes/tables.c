#include "tables.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "arrivals.h"
#include "group_share.h"
#include "rank_digest.h"
#include "load/job_build.h"
#include "load/rank_view.h"
#include "util/sat_math.h"
#include "tsc_format.h"

int tsa_size_bucket(uint64_t bytes)
{
    static const uint64_t limits[] = {64ull << 10, 1ull << 20, 16ull << 20, 128ull << 20,
                                      1ull << 30};
    for (int i = 0; i < (int)(sizeof limits / sizeof limits[0]); i++)
        if (bytes < limits[i])
            return i;
    return TSA_SIZE_UNKNOWN - 1;
}

int tsa_nccl_size_bucket(const tsa_nccl_op *op)
{
    return op->flags & TSA_NCCL_F_BYTES_UNKNOWN ? TSA_SIZE_UNKNOWN : tsa_size_bucket(op->bytes);
}

double tsa_busbw_factor(uint8_t op, uint32_t n)
{
    unsigned m = tsc_nccl_op_busbw(op);   /* x m (n-1)/n, 0: x 1 */
    if (n < 2 || !m)
        return 1;
    return (double)m * (n - 1) / n;
}

static int in_window(int64_t t, const tsa_rank_result *rr)
{
    return t >= rr->window_start_ns && t < rr->window_end_ns;
}

static int by_ns(const void *pa, const void *pb)
{
    const tsa_kernel_row *a = pa, *b = pb;
    if (a->ns != b->ns)
        return a->ns < b->ns ? 1 : -1;
    return strcmp(a->name, b->name);
}

int tsa_kernel_totals(const tsa_rank *r, const tsa_rank_result *rr, tsa_kernel_total **out,
                      size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    if (!r->n_kernels || !r->n_strings)
        return 0;
    int64_t *ns = calloc(r->n_strings, sizeof *ns);
    uint64_t *cnt = calloc(r->n_strings, sizeof *cnt);
    uint8_t *cat = calloc(r->n_strings, 1);
    tsa_kernel_total *v = NULL;
    size_t n = 0, names = 0;
    if (!ns || !cnt || !cat)
        goto oom;
    for (size_t i = 0; i < r->n_kernels; i++) {
        const tsa_kernel *k = &r->kernels[i];
        if (!in_window(k->start_ns, rr) || k->name >= r->n_strings)
            continue;
        TSA_SAT_ACC(ns[k->name], k->end_ns - k->start_ns);
        names += !cnt[k->name]++;
        cat[k->name] = k->category;
    }
    if (names && !(v = calloc(names, sizeof *v)))
        goto oom;
    for (size_t s = 0; s < r->n_strings && n < names; s++) {
        if (!cnt[s])
            continue;
        v[n] = (tsa_kernel_total){strdup(r->strings[s]), cat[s], cnt[s], ns[s]};
        if (!v[n++].name)
            goto oom;
    }
    free(ns);
    free(cnt);
    free(cat);
    *out = v;
    *n_out = n;
    return 0;
oom:
    for (size_t i = 0; i < n; i++)
        free(v[i].name);
    free(v);
    free(ns);
    free(cnt);
    free(cat);
    return -1;
}

/* Kernel time by name: the ranks' totals merged by name, in rank order. */
static int kernel_rows(tsa_analysis *a)
{
    tsa_kernel_row *rows = NULL;
    size_t n = 0, cap = 0;
    for (size_t ri = 0; ri < a->n_ranks; ri++) {
        const tsa_rank_digest *d = &a->digests[ri];
        for (size_t t = 0; t < d->n_kernels; t++) {
            const tsa_kernel_total *k = &d->kernels[t];
            size_t j = 0;
            while (j < n && strcmp(rows[j].name, k->name))
                j++;
            if (j == n) {
                if (tsa_grow((void **)&rows, n, &cap, sizeof *rows))
                    goto oom;
                memset(&rows[n], 0, sizeof rows[n]);
                if (!(rows[n].name = strdup(k->name)))
                    goto oom;
                rows[n].category = k->category;
                n++;
            }
            TSA_SAT_ACC(rows[j].ns, k->ns);
            rows[j].count += k->count;
        }
    }
    if (n > 1)
        qsort(rows, n, sizeof *rows, by_ns);
    for (size_t i = TSA_TOP_KERNELS; i < n; i++)
        free(rows[i].name);
    a->kernels = rows;
    a->n_kernels = n < TSA_TOP_KERNELS ? n : TSA_TOP_KERNELS;
    return 0;
oom:
    for (size_t i = 0; i < n; i++)
        free(rows[i].name);
    free(rows);
    return -1;
}

/* The part of call i's span [s, e) spent before its last peer arrived
 * (rank_pass.c's wait): not transfer time. */
static int64_t waiting_ns(const tsa_rank *r, const tsa_nccl_op *op, int64_t s, int64_t e,
                          const tsa_arrivals *arr)
{
    if (!arr || !arr->n || !tsa_counts_for_arrival(op) || r->clock_offset_ns == INT64_MIN)
        return 0;
    int64_t latest = tsa_arrivals_latest(arr, op->comm_id, op->seq);
    if (latest == INT64_MIN)
        return 0;
    int64_t own = tsa_sat_add(latest, -r->clock_offset_ns);
    if (own <= s)
        return 0;
    return (own < e ? own : e) - s;
}

static int coll_rows(tsa_analysis *a, const tsa_arrivals *arr)
{
    /* One row per op code that appears; at most 256.  Group members get
     * their share of the GroupEnd (group_share.h); bus bandwidth only from
     * calls whose time is their own. */
    tsa_coll_row *rows = calloc(256, sizeof *rows);
    double *fbytes = calloc(256, sizeof *fbytes);
    int64_t *own_ns = calloc(256, sizeof *own_ns);
    if (!rows || !fbytes || !own_ns)
        goto oom;
    for (size_t ri = 0; ri < a->job->n_ranks; ri++) {
        tsa_rank_view v;
        const tsa_rank *r = tsa_view_open(&a->job->ranks[ri], TSA_VIEW_CALLS, &v);
        const tsa_rank_result *rr = &a->ranks[ri];
        tsa_call_span *sp = r ? tsa_call_spans(r) : NULL;
        if (!r || (r->n_nccl && !sp)) {
            tsa_view_close(&v);
            goto oom;
        }
        for (size_t i = 0; i < r->n_nccl; i++) {
            const tsa_nccl_op *op = &r->nccl[i];
            if (op->op >= TSA_COLL_ROWS || sp[i].skip || !in_window(sp[i].start_ns, rr))
                continue;
            tsa_coll_row *row = &rows[op->op];
            int64_t d = sp[i].end_ns - sp[i].start_ns;
            row->op = op->op;
            row->count++;
            TSA_SAT_ACC(row->ns, d);
            int b = tsa_nccl_size_bucket(op);
            row->bucket_count[b]++;
            TSA_SAT_ACC(row->bucket_ns[b], d);
            if (b == TSA_SIZE_UNKNOWN) {
                row->bytes_unknown++; /* no size: no bytes, no bandwidth */
                continue;
            }
            row->bytes += op->bytes;
            /* Bus bandwidth over the transfer: a call that only waited
             * for its peers moved its bytes in no time it can be timed by. */
            int64_t xfer = d - waiting_ns(r, op, sp[i].start_ns, sp[i].end_ns, arr);
            if (sp[i].own && xfer > 0) {
                TSA_SAT_ACC(own_ns[op->op], xfer);
                fbytes[op->op] += (double)op->bytes * tsa_busbw_factor(op->op, op->comm_size);
            }
        }
        free(sp);
        tsa_view_close(&v);
    }
    for (size_t ri = 0; ri < a->n_ranks; ri++)
        for (int op = 0; op < TSA_COLL_ROWS; op++) {
            TSA_SAT_ACC(rows[op].exposed_ns, a->ranks[ri].coll_exposed_ns[op]);
            TSA_SAT_ACC(rows[op].exposed_wait_ns, a->ranks[ri].coll_exposed_wait_ns[op]);
            for (int b = 0; b < TSA_SIZE_BUCKETS; b++)
                TSA_SAT_ACC(rows[op].bucket_exposed_ns[b],
                            a->ranks[ri].coll_bucket_exposed_ns[op][b]);
        }
    size_t n = 0;
    for (int op = 0; op < 256; op++) {
        if (!rows[op].count)
            continue;
        rows[op].busbw_gbps = own_ns[op] > 0 ? fbytes[op] / (double)own_ns[op] : NAN;
        rows[n++] = rows[op];
    }
    free(fbytes);
    free(own_ns);
    a->colls = rows;
    a->n_colls = n;
    return 0;
oom:
    free(rows);
    free(fbytes);
    free(own_ns);
    return -1;
}

void tsa_copy_totals(const tsa_rank *r, const tsa_rank_result *rr, tsa_copy_row all[7],
                     int64_t known_ns[7])
{
    memset(all, 0, 7 * sizeof *all);
    memset(known_ns, 0, 7 * sizeof *known_ns);
    for (size_t i = 0; i < r->n_copies; i++) {
        const tsa_copy *c = &r->copies[i];
        if (!in_window(c->start_ns, rr) || c->dir > TSA_COPY_MEMSET)
            continue;
        all[c->dir].dir = c->dir;
        all[c->dir].count++;
        TSA_SAT_ACC(all[c->dir].ns, c->end_ns - c->start_ns);
        if (c->bytes_unknown) {
            all[c->dir].bytes_unknown++;
            continue;
        }
        all[c->dir].bytes += c->bytes;
        TSA_SAT_ACC(known_ns[c->dir], c->end_ns - c->start_ns);
    }
}

static void copy_rows(tsa_analysis *a)
{
    tsa_copy_row all[7];
    int64_t known_ns[7] = {0};
    memset(all, 0, sizeof all);
    for (size_t ri = 0; ri < a->n_ranks; ri++)
        for (int d = 0; d < 7; d++) {
            const tsa_copy_row *c = &a->digests[ri].copies[d];
            if (!c->count)
                continue;
            all[d].dir = c->dir;
            all[d].count += c->count;
            all[d].bytes += c->bytes;
            all[d].bytes_unknown += c->bytes_unknown;
            TSA_SAT_ACC(all[d].ns, c->ns);
            TSA_SAT_ACC(known_ns[d], a->digests[ri].copy_known_ns[d]);
        }
    a->n_copies = 0;
    for (int d = 0; d < 7; d++) {
        if (!all[d].count)
            continue;
        /* no time (a 0-us memset) or no size: the bandwidth is unknown */
        all[d].gbps = all[d].bytes_unknown == all[d].count || known_ns[d] <= 0
                          ? NAN
                          : (double)all[d].bytes / (double)known_ns[d];
        a->copies[a->n_copies++] = all[d];
    }
}

int tsa_build_tables(tsa_analysis *a, const tsa_arrivals *arr)
{
    if (kernel_rows(a) || coll_rows(a, arr))
        return -1;
    copy_rows(a);
    return 0;
}
