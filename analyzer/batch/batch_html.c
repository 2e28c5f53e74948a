/* The fleet view as an HTML page (batch.h): which hosts keep coming back
 * as the straggler across jobs, and with which cause; then where fixing
 * pays most (recoverable GPU-hours) and every job's row.  A host named in
 * several jobs points at the machine, not at the jobs.  Every host, job
 * path, verdict and cause comes from the jobs or from summary files beside
 * them, so all of it is escaped. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "report/html_bar_chart.h"
#include "report/html_charts.h"
#include "report/html_escape.h"

#define MAX_HOST_BARS 40
#define MAX_CAUSES 4

typedef struct cause_tally {
    const char *name[MAX_CAUSES];
    size_t count[MAX_CAUSES];
    size_t n, other;
} cause_tally;

/* Causes of the jobs that blame `host`, in order of first appearance. */
static void tally(const tsa_batch_row *rows, size_t n, const char *host, cause_tally *t)
{
    memset(t, 0, sizeof *t);
    for (size_t i = 0; i < n; i++) {
        if (!tsa_batch_row_blames(&rows[i], host))
            continue;
        const char *c = tsa_batch_row_blamed_cause(&rows[i]);
        c = c ? c : "none recorded";
        size_t k = 0;
        while (k < t->n && strcmp(t->name[k], c))
            k++;
        if (k == t->n && t->n == MAX_CAUSES) {
            t->other++;
            continue;
        }
        if (k == t->n)
            t->name[t->n++] = c;
        t->count[k]++;
    }
}

static void tally_text(char *buf, size_t cap, const cause_tally *t)
{
    size_t used = (size_t)snprintf(buf, cap, "cause:");
    for (size_t k = 0; k < t->n && used < cap; k++)
        used += (size_t)snprintf(buf + used, cap - used, "%s %s x%zu", k ? "," : "", t->name[k],
                                 t->count[k]);
    if (t->other && used < cap)
        snprintf(buf + used, cap - used, ", other x%zu", t->other);
}

/* The tail of a long job path: its last directories tell jobs apart. */
static void job_label(char *buf, size_t cap, const char *job)
{
    size_t len = strlen(job), keep = cap > 4 ? cap - 4 : 0;
    if (len <= keep)
        snprintf(buf, cap, "%s", job);
    else
        snprintf(buf, cap, "...%s", job + len - keep);
}

static void hosts_chart(FILE *out, const tsa_batch_row *rows, size_t n)
{
    tsa_batch_host *h;
    size_t nh = tsa_batch_blamed_hosts(rows, n, 1, &h), repeat = 0;
    size_t nb = nh < MAX_HOST_BARS ? nh : MAX_HOST_BARS;
    tsa_html_bar *bars = calloc(nb ? nb : 1, sizeof *bars);
    if (!bars) {
        free(h);
        return;
    }
    for (size_t k = 0; k < nh; k++)
        repeat += h[k].jobs > 1;
    for (size_t k = 0; k < nb; k++) {
        cause_tally t;
        tally(rows, n, h[k].host, &t);
        snprintf(bars[k].label, sizeof bars[k].label, "%s", h[k].host);
        char causes[sizeof bars[k].note - 2];
        tally_text(causes, sizeof causes, &t);
        snprintf(bars[k].note, sizeof bars[k].note, "(%s)", causes);
        bars[k].v = (double)h[k].jobs;
        bars[k].cls = h[k].jobs > 1 ? "loss" : NULL;
    }
    char reading[512];
    if (!nh) {
        snprintf(reading, sizeof reading, "No job of the %zu named a straggler host.", n);
    } else {
        cause_tally t;
        tally(rows, n, h[0].host, &t);
        char causes[160];
        tally_text(causes, sizeof causes, &t);
        snprintf(reading, sizeof reading, "%s was the straggler's host in %zu of %zu jobs (%s); "
                 "%zu of %zu blamed hosts came back in more than one job (orange)%s.",
                 h[0].host, h[0].jobs, n, causes, repeat, nh,
                 nh > nb ? "; the 40 most blamed are drawn" : "");
    }
    tsa_html_bar_spec spec = {"fleet-hosts", "Hosts named straggler across jobs, with the cause",
                              reading, "jobs", "jobs in which the host held the straggler",
                              "no straggler host in any job", 1, "job"};
    tsa_html_bar_chart(out, &spec, bars, nb);
    free(bars);
    free(h);
}

static void jobs_chart(FILE *out, const tsa_batch_row *rows, size_t n, size_t top)
{
    size_t *idx;
    size_t nk = tsa_batch_ranked_jobs(rows, n, &idx);
    size_t nb = nk < top ? nk : top;
    tsa_html_bar *bars = calloc(nb ? nb : 1, sizeof *bars);
    if (!bars) {
        free(idx);
        return;
    }
    double total = 0;
    for (size_t k = 0; k < nk; k++)
        total += rows[idx[k]].recoverable_gpu_hours;
    for (size_t k = 0; k < nb; k++) {
        const tsa_batch_row *r = &rows[idx[k]];
        const char *cause = r->lead_finding && r->lead_finding_s > 0 ? r->lead_finding
                                                                     : r->top_recoverable;
        job_label(bars[k].label, 28, r->job);
        snprintf(bars[k].note, sizeof bars[k].note, "%s%s", cause ? "mostly " : "",
                 cause ? cause : "");
        bars[k].v = r->recoverable_gpu_hours;
    }
    char reading[512] = "No job has a recoverable figure.";
    if (nb && total > 0)
        snprintf(reading, sizeof reading, "The first job holds %.1f%% of the %.4g recoverable "
                 "GPU-hours of %zu jobs.", 100 * bars[0].v / total, total, nk);
    tsa_html_bar_spec spec = {"fleet-jobs", "Jobs by recoverable GPU-hours (analysed steps)",
                              reading, "GPU-h", "GPU-hours that fixing the job could win back",
                              "no job with a recoverable figure", 0, NULL};
    tsa_html_bar_chart(out, &spec, bars, nb);
    free(bars);
    free(idx);
}

static void cell(FILE *out, const char *s, const char *cls)
{
    if (cls)
        fprintf(out, "<td class=\"%s\">", cls);
    else
        fprintf(out, "<td>");
    tsa_html_escape(out, s ? s : "");
    fprintf(out, "</td>");
}

static void rows_table(FILE *out, const tsa_batch_row *rows, size_t n)
{
    fprintf(out, "<table id=\"fleet-rows\"><caption>Every job</caption><tr><th>job</th>"
                 "<th>status</th><th>verdict</th><th>straggler</th><th>host</th><th>cause</th>"
                 "<th>recoverable GPU-h</th><th>lead finding</th></tr>\n");
    for (size_t i = 0; i < n; i++) {
        const tsa_batch_row *r = &rows[i];
        fprintf(out, "<tr>");
        cell(out, r->job, "name");
        cell(out, r->status, NULL);
        cell(out, r->verdict, NULL);
        if (r->straggler_rank >= 0)
            fprintf(out, "<td>rank %ld</td>", r->straggler_rank);
        else
            fprintf(out, "<td></td>");
        cell(out, r->straggler_rank >= 0 ? r->straggler_host : NULL, NULL);
        cell(out, r->straggler_cause, NULL);
        if (isnan(r->recoverable_gpu_hours))
            fprintf(out, "<td></td>");
        else
            fprintf(out, "<td>%.4f</td>", r->recoverable_gpu_hours);
        cell(out, r->lead_finding, NULL);
        fprintf(out, "</tr>\n");
    }
    fprintf(out, "</table>\n");
}

int tsa_batch_write_html(FILE *out, const tsa_batch_row *rows, size_t n, size_t top)
{
    size_t ok = 0;
    for (size_t i = 0; i < n; i++)
        ok += !strcmp(rows[i].status, "ok");
    tsa_html_page_begin(out, "tscope fleet view");
    fprintf(out, "<header><h1>tscope fleet view: %zu jobs</h1>\n<p class=\"facts\">%zu ok, "
                 "%zu failed or partial</p></header>\n<main>\n", n, ok, n - ok);
    hosts_chart(out, rows, n);
    jobs_chart(out, rows, n, top);
    rows_table(out, rows, n);
    fprintf(out, "</main>\n<footer><p class=\"facts\">tscope-report batch; the text and NDJSON "
                 "fleet views list the same hosts (those in more than one job).</p></footer>"
                 "</body></html>\n");
    return ferror(out) ? -1 : 0;
}

int tsa_batch_html_file(const char *path, const tsa_batch_row *rows, size_t n, size_t top)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "tscope-report: batch: cannot write %s\n", path);
        return -1;
    }
    int rc = tsa_batch_write_html(f, rows, n, top);
    if (fclose(f) || rc) {
        fprintf(stderr, "tscope-report: batch: error writing %s\n", path);
        return -1;
    }
    fprintf(stderr, "wrote %s\n", path);
    return 0;
}
