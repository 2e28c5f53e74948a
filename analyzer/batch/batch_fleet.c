/* Fleet view over batch rows: hosts that were the straggler or the slow
 * host in more than one job (a host problem, not a job problem), and the jobs with the most
 * recoverable GPU-hours (where fixing things pays most). */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "reader/record_json.h"
#include "reader/text_visible.h"

static int cmp_host(const void *pa, const void *pb)
{
    const tsa_batch_host *a = pa, *b = pb;
    if (a->jobs != b->jobs)
        return a->jobs < b->jobs ? 1 : -1;
    return strcmp(a->host, b->host);
}

size_t tsa_batch_blamed_hosts(const tsa_batch_row *rows, size_t n, size_t min_jobs,
                              tsa_batch_host **out)
{
    tsa_batch_host *h = calloc(n ? n : 1, sizeof *h);
    size_t nh = 0;
    if (!h) {
        *out = NULL;
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        const char *host = tsa_batch_row_blamed_host(&rows[i]);
        if (!host)
            continue;
        size_t k = 0;
        while (k < nh && strcmp(h[k].host, host))
            k++;
        if (k == nh)
            h[nh++] = (tsa_batch_host){host, 0};
        h[k].jobs++;
    }
    size_t keep = 0;
    for (size_t k = 0; k < nh; k++)
        if (h[k].jobs >= min_jobs)
            h[keep++] = h[k];
    if (keep > 1)
        qsort(h, keep, sizeof *h, cmp_host);
    *out = h;
    return keep;
}

const char *tsa_batch_row_blamed_host(const tsa_batch_row *r)
{
    return r->straggler_rank >= 0 && r->straggler_host ? r->straggler_host : r->slow_host;
}

const char *tsa_batch_row_blamed_cause(const tsa_batch_row *r)
{
    return r->straggler_rank >= 0 && r->straggler_host ? r->straggler_cause : r->slow_host_cause;
}

int tsa_batch_row_blames(const tsa_batch_row *r, const char *host)
{
    const char *h = tsa_batch_row_blamed_host(r);
    return h && !strcmp(h, host);
}

static const tsa_batch_row *g_rows;
static int cmp_recoverable(const void *pa, const void *pb)
{
    double a = g_rows[*(const size_t *)pa].recoverable_gpu_hours;
    double b = g_rows[*(const size_t *)pb].recoverable_gpu_hours;
    a = isnan(a) ? -1 : a;
    b = isnan(b) ? -1 : b;
    if (a != b)
        return a < b ? 1 : -1;
    return strcmp(g_rows[*(const size_t *)pa].job, g_rows[*(const size_t *)pb].job);
}

size_t tsa_batch_ranked_jobs(const tsa_batch_row *rows, size_t n, size_t **out)
{
    size_t *idx = malloc((n ? n : 1) * sizeof *idx), k = 0;
    if (!idx) {
        *out = NULL;
        return 0;
    }
    for (size_t i = 0; i < n; i++)
        if (!isnan(rows[i].recoverable_gpu_hours))
            idx[k++] = i;
    g_rows = rows;
    if (k > 1)
        qsort(idx, k, sizeof *idx, cmp_recoverable);
    *out = idx;
    return k;
}

void tsa_batch_print_fleet(FILE *out, const tsa_batch_row *rows, size_t n, size_t top)
{
    tsa_batch_host *h;
    size_t nh = tsa_batch_blamed_hosts(rows, n, 2, &h);
    fprintf(out, "\nfleet: hosts named straggler or slow host in more than one job\n");
    if (!nh)
        fprintf(out, "  none\n");
    for (size_t k = 0; k < nh; k++) {
        fprintf(out, "  %s: %zu jobs:", tsr_vis(h[k].host), h[k].jobs);
        for (size_t i = 0; i < n; i++) {
            const tsa_batch_row *r = &rows[i];
            if (!tsa_batch_row_blames(r, h[k].host))
                continue;
            const char *cause = tsa_batch_row_blamed_cause(r);
            if (r->straggler_rank >= 0 && r->straggler_host)
                fprintf(out, " %s (rank %ld", tsr_vis(r->job), r->straggler_rank);
            else
                fprintf(out, " %s (slow host", tsr_vis(r->job));
            fprintf(out, "%s%s)", cause ? ", cause: " : "", cause ? tsr_vis(cause) : "");
        }
        fputc('\n', out);
    }
    free(h);
    size_t *idx;
    size_t nk = tsa_batch_ranked_jobs(rows, n, &idx);
    fprintf(out, "\nfleet: jobs by recoverable GPU-hours (analysed steps)\n");
    if (!nk)
        fprintf(out, "  none\n");
    for (size_t k = 0; k < nk && k < top; k++) {
        const tsa_batch_row *r = &rows[idx[k]];
        /* the report's cause when it has one, else the largest budget line */
        const char *cause = r->lead_finding && r->lead_finding_s > 0 ? r->lead_finding
                                                                     : r->top_recoverable;
        fprintf(out, "  %2zu. %10.4f GPU-h  %s%s%s\n", k + 1, r->recoverable_gpu_hours,
                tsr_vis(r->job), cause ? "  mostly " : "", tsr_vis(cause));
    }
    free(idx);
}

/* One NDJSON line (nothing when out of memory); frees o. */
static void print_line_and_delete(FILE *out, cJSON *o)
{
    char *s = cJSON_PrintUnformatted(o);
    if (s)
        fprintf(out, "%s\n", s);
    free(s);
    cJSON_Delete(o);
}

/* A job path or a cause as a JSON string: valid UTF-8 whatever bytes it
 * holds (rows may come from summary files on disk). */
static cJSON *text_string(const char *text)
{
    char *clean = tsr_utf8_clean_dup(text);
    cJSON *v = cJSON_CreateString(clean ? clean : "");
    free(clean);
    return v;
}

/* A fleet line's object with the fields every NDJSON row starts with. */
static cJSON *typed_row(const char *type)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "type", type);
    cJSON_AddNumberToObject(o, "schema_version", TSA_BATCH_NDJSON_SCHEMA);
    return o;
}

void tsa_batch_print_fleet_ndjson(FILE *out, const tsa_batch_row *rows, size_t n, size_t top)
{
    tsa_batch_host *h;
    size_t nh = tsa_batch_blamed_hosts(rows, n, 2, &h);
    for (size_t k = 0; k < nh; k++) {
        cJSON *o = typed_row("fleet_host");
        tsr_json_add_text(o, "host", h[k].host);
        cJSON_AddNumberToObject(o, "job_count", (double)h[k].jobs);
        cJSON *jobs = cJSON_AddArrayToObject(o, "jobs");
        cJSON *causes = cJSON_AddArrayToObject(o, "causes");
        for (size_t i = 0; i < n; i++)
            if (tsa_batch_row_blames(&rows[i], h[k].host)) {
                const char *c = tsa_batch_row_blamed_cause(&rows[i]);
                cJSON_AddItemToArray(jobs, text_string(rows[i].job));
                cJSON_AddItemToArray(causes, c ? text_string(c) : cJSON_CreateNull());
            }
        print_line_and_delete(out, o);
    }
    free(h);
    size_t *idx;
    size_t nk = tsa_batch_ranked_jobs(rows, n, &idx);
    for (size_t k = 0; k < nk && k < top; k++) {
        const tsa_batch_row *r = &rows[idx[k]];
        cJSON *o = typed_row("fleet_job");
        /* a place in this list (1 = most), not an NCCL rank */
        cJSON_AddNumberToObject(o, "position", (double)(k + 1));
        tsr_json_add_text(o, "job", r->job);
        cJSON_AddNumberToObject(o, "recoverable_gpu_hours", r->recoverable_gpu_hours);
        tsr_json_add_text(o, "top_recoverable", r->top_recoverable);
        tsr_json_add_text(o, "lead_finding", r->lead_finding);
        print_line_and_delete(out, o);
    }
    free(idx);
}
