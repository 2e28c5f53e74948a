/* Bar charts of the HTML report (html_charts.h): kernel time by category
 * and collective time by operation and message size.  Both are per rank
 * (job sums / ranks) so they read on the budget's scale. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "html_bar_chart.h"
#include "html_charts.h"
#include "html_escape.h"
#include "load/kernel_category.h"
#include "views_names.h"

typedef tsa_html_bar bar;

/* The report's bars are seconds per rank. */
static void bar_chart(FILE *out, const char *id, const char *title, const char *reading,
                      bar *bars, size_t n, const char *empty)
{
    tsa_html_bar_spec spec = {id, title, reading, "s", "seconds per rank (analysis window)",
                              empty, 0, NULL};
    tsa_html_bar_chart(out, &spec, bars, n);
}

/* The top kernels by name: names come from the input, so escaped. */
static void kernel_table(FILE *out, const tsa_analysis *a)
{
    size_t n = a->n_kernels < 15 ? a->n_kernels : 15;
    if (!n)
        return;
    double per = a->n_ranks ? (double)a->n_ranks : 1;
    fprintf(out, "<table id=\"top-kernels\"><caption>Top kernels by time (seconds per rank)"
                 "</caption><tr><th>kernel</th><th>category</th><th>count</th><th>s/rank</th>"
                 "</tr>\n");
    for (size_t i = 0; i < n; i++) {
        const tsa_kernel_row *k = &a->kernels[i];
        fprintf(out, "<tr><td class=\"name\">");
        tsa_html_escape(out, k->name);
        fprintf(out, "</td><td>%s</td><td>%llu</td><td>%.4g</td></tr>\n",
                tsa_kcat_name((tsa_kcat)k->category), (unsigned long long)k->count,
                (double)k->ns / per / 1e9);
    }
    fprintf(out, "</table>\n");
}

void tsa_html_kernels(FILE *out, const tsa_analysis *a)
{
    bar bars[TSA_KCAT_COUNT] = {0};
    size_t n = 0;
    double per = a->n_ranks ? (double)a->n_ranks : 1, total = 0;
    for (int c = 0; c < TSA_KCAT_COUNT; c++) {
        if (a->kcat_ns[c] <= 0)
            continue;
        bar *b = &bars[n++];
        snprintf(b->label, sizeof b->label, "%s", tsa_kcat_name((tsa_kcat)c));
        snprintf(b->note, sizeof b->note, "%llu kernels", (unsigned long long)a->kcat_count[c]);
        b->v = (double)a->kcat_ns[c] / per / 1e9;
        total += b->v;
    }
    char reading[256];
    if (n) {
        qsort(bars, n, sizeof *bars, tsa_html_bar_cmp);
        snprintf(reading, sizeof reading, "%s kernels take %.1f%% of GPU kernel time.",
                 bars[0].label, 100 * bars[0].v / total);
    } else {
        snprintf(reading, sizeof reading, "This input has no GPU kernel records.");
    }
    bar_chart(out, "kernel-categories", "GPU kernel time by category", reading, bars, n,
              "no GPU kernel records (host-only capture)");
    kernel_table(out, a);
}

void tsa_html_collectives(FILE *out, const tsa_analysis *a)
{
    size_t cap = a->n_colls * TSA_SIZE_BUCKETS, n = 0;
    bar *bars = calloc(cap ? cap : 1, sizeof *bars);
    if (!bars)
        return;
    double per = a->n_ranks ? (double)a->n_ranks : 1;
    for (size_t i = 0; i < a->n_colls; i++) {
        const tsa_coll_row *c = &a->colls[i];
        for (int k = 0; k < TSA_SIZE_BUCKETS; k++) {
            if (c->bucket_ns[k] <= 0)
                continue;
            bar *b = &bars[n++];
            snprintf(b->label, sizeof b->label, "%s %s", tsa_views_nccl_op_name(c->op),
                     tsa_size_bucket_name(k));
            if (isnan(c->busbw_gbps))
                snprintf(b->note, sizeof b->note, "%llu calls",
                         (unsigned long long)c->bucket_count[k]);
            else
                snprintf(b->note, sizeof b->note, "%llu calls, busbw %.3g GB/s",
                         (unsigned long long)c->bucket_count[k], c->busbw_gbps);
            b->v = (double)c->bucket_ns[k] / per / 1e9;
        }
    }
    char reading[256] = "No collective calls in the analysis window.";
    if (n) {
        qsort(bars, n, sizeof *bars, tsa_html_bar_cmp);
        snprintf(reading, sizeof reading, "Most collective time is in %s calls; busbw is the "
                 "operation's bus bandwidth over all its sizes.", bars[0].label);
    }
    bar_chart(out, "collective-sizes", "Collective time by operation and message size", reading,
              bars, n, "no collective calls");
    free(bars);
}
