/* One batch row: filled from an analysis, and its JSON form (ndjson output
 * and the per-job summary file share it, so a cached row prints the same). */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "model/analysis.h"
#include "load/job_load.h"
#include "load/load_any.h"
#include "report/idle_report.h"
#include "reader/record_json.h"
#include "driver/analyze.h"
#include "util/json_int.h"

void tsa_batch_row_init(tsa_batch_row *r, const char *job)
{
    memset(r, 0, sizeof *r);
    r->job = strdup(job ? job : "");
    snprintf(r->status, sizeof r->status, "failed");
    r->ranks = r->hosts = r->steps = -1;
    r->median_step_s = r->mfu = r->top_recoverable_s = r->lead_finding_s = NAN;
    r->exposed_comm_share = r->data_stall_share = NAN;
    r->recoverable_gpu_hours = NAN;
    r->straggler_rank = -1;
}

void tsa_batch_row_free(tsa_batch_row *r)
{
    free(r->job);
    free(r->run_id);
    free(r->error);
    free(r->top_recoverable);
    free(r->verdict);
    free(r->confidence);
    free(r->lead_finding);
    free(r->straggler_host);
    free(r->straggler_cause);
    free(r->slow_host);
    free(r->slow_host_cause);
    memset(r, 0, sizeof *r);
}

void tsa_batch_row_fail(tsa_batch_row *r, const char *status, const char *fmt, ...)
{
    snprintf(r->status, sizeof r->status, "%s", status);
    free(r->error);
    r->error = NULL;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&r->error, fmt, ap) < 0)
        r->error = NULL;
    va_end(ap);
}

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

/* The first cause of the cause block of `rank` (-1: the block of host
 * `host`), "unknown" when it names none, NULL when there is no block. */
static const char *first_cause(const tsa_analysis *a, int32_t rank, const char *host)
{
    for (size_t i = 0; i < a->cause.n_blocks; i++) {
        const tsa_cause_block *b = &a->cause.blocks[i];
        if (b->rank == rank && (rank >= 0 || (b->host && host && !strcmp(b->host, host))))
            return b->n_causes ? tsa_cause_kind_name(b->causes[0].kind) : "unknown";
    }
    return NULL;
}

void tsa_batch_analyze_job(const char *dir, tsa_batch_row *row)
{
    char err[512];
    tsa_job *job;
    if (tsa_views_load_job(dir, &tsa_views_summary_load, &job, err, sizeof err)) {
        tsa_batch_row_fail(row, "failed", "%s", err);
        return;
    }
    tsa_analysis *a = tsa_analyze(job, NULL);
    if (!a) {
        tsa_batch_row_fail(row, "failed", "out of memory during the analysis");
        tsa_job_free(job);
        return;
    }
    const tsa_summary *s = &a->summary;
    row->run_id = dup_or_null(s->run_id);
    row->ranks = (long)s->ranks;
    row->hosts = (long)s->hosts;
    /* without steps the window is no step: none found, no step time */
    row->steps = s->no_steps ? 0 : (long)s->steps;
    row->median_step_s = !s->no_steps && s->median_step_ns > 0 ? s->median_step_ns / 1e9 : NAN;
    row->mfu = s->mfu;
    row->verdict = dup_or_null(tsa_verdict_name(a->verdict));
    row->confidence = dup_or_null(tsa_confidence_name(a->confidence));
    if (a->findings.n) { /* sorted: the verdict's cause, then most recoverable */
        row->lead_finding = dup_or_null(a->findings.items[0].id);
        row->lead_finding_s = a->findings.items[0].recoverable_s;
    }
    double ranks = s->ranks ? (double)s->ranks : 1;
    if (s->top_recoverable >= 0 && s->top_recoverable < TSA_BL_COUNT) {
        row->top_recoverable = dup_or_null(s->lines[s->top_recoverable].name);
        row->top_recoverable_s = (double)s->lines[s->top_recoverable].ns / ranks / 1e9;
    }
    double rec = 0;
    for (int l = 0; l < TSA_BL_COUNT; l++)
        if (s->lines[l].recoverable && s->lines[l].ns > 0)
            rec += (double)s->lines[l].ns;
    row->recoverable_gpu_hours = rec / 3.6e12;
    /* a share these records cannot measure is unknown, not 0 */
    row->exposed_comm_share = a->cpu_only ? NAN : s->exposed_comm_share;
    row->data_stall_share =
        (!a->cpu_only || a->host_data) && tsa_line_measured(a, TSA_BL_DATA_STALL)
            ? s->data_stall_share
            : NAN;
    row->straggler_rank = s->straggler_rank;
    row->straggler_host = s->straggler_rank >= 0 ? dup_or_null(s->straggler_host) : NULL;
    if (a->have_xrank && a->xrank.straggler)
        row->straggler_cause = dup_or_null(first_cause(a, a->xrank.straggler->rank, NULL));
    if (a->have_xrank && a->xrank.slow_host) {
        row->slow_host = dup_or_null(a->xrank.slow_host);
        row->slow_host_cause = dup_or_null(first_cause(a, -1, a->xrank.slow_host));
    }
    row->problems = (long)job->n_problems;
    if (job->n_problems) {
        tsa_batch_row_fail(row, "partial", "%s: %s", job->problems[0].file,
                           job->problems[0].message);
    } else
        snprintf(row->status, sizeof row->status, "ok");
    tsa_analysis_free(a);
    tsa_job_free(job);
}

/* ------------------------------------------------------------ JSON */

static void add_str(cJSON *o, const char *k, const char *v)
{
    tsr_json_add_text(o, k, v);   /* job paths may hold any bytes: valid UTF-8 out */
}

static void add_count(cJSON *o, const char *k, long v)
{
    if (v < 0)
        cJSON_AddNullToObject(o, k);
    else
        cJSON_AddNumberToObject(o, k, (double)v);
}

/* The documented column order (docs/batch-schema.md), after the row's
 * type and schema version that every NDJSON row starts with. */
void *tsa_batch_row_to_json(const tsa_batch_row *r)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddStringToObject(o, "type", "job");
    cJSON_AddNumberToObject(o, "schema_version", TSA_BATCH_NDJSON_SCHEMA);
    add_str(o, "job", r->job);
    add_str(o, "run_id", r->run_id);
    add_str(o, "status", r->status);
    add_count(o, "ranks", r->ranks);
    add_count(o, "hosts", r->hosts);
    add_count(o, "steps", r->steps);
    tsa_json_add_num(o, "median_step_s", r->median_step_s);
    tsa_json_add_num(o, "mfu", r->mfu);
    add_str(o, "top_recoverable", r->top_recoverable);
    tsa_json_add_num(o, "top_recoverable_s", r->top_recoverable_s);
    tsa_json_add_num(o, "exposed_comm_share", r->exposed_comm_share);
    tsa_json_add_num(o, "data_stall_share", r->data_stall_share);
    add_count(o, "straggler_rank", r->straggler_rank);
    add_str(o, "straggler_host", r->straggler_host);
    tsa_json_add_num(o, "recoverable_gpu_hours", r->recoverable_gpu_hours);
    add_count(o, "problems", r->problems);
    add_str(o, "error", r->error);
    add_str(o, "verdict", r->verdict);
    add_str(o, "confidence", r->confidence);
    add_str(o, "lead_finding", r->lead_finding);
    tsa_json_add_num(o, "lead_finding_s", r->lead_finding_s);
    add_str(o, "straggler_cause", r->straggler_cause);
    add_str(o, "slow_host", r->slow_host);
    add_str(o, "slow_host_cause", r->slow_host_cause);
    cJSON_AddBoolToObject(o, "cached", r->cached);
    return o;
}

char *tsa_batch_row_json_text(const tsa_batch_row *r)
{
    cJSON *o = tsa_batch_row_to_json(r);
    char *s = o ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    return s;
}

static double get_num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static long get_count(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble < 1e15 ? (long)v->valuedouble
                                                                             : -1;
}

static char *get_str(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? strdup(v->valuestring) : NULL;
}

int tsa_batch_row_from_json(const void *cjson, const char *job, tsa_batch_row *r)
{
    const cJSON *o = cjson;
    tsa_batch_row_init(r, job);
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(o, "status");
    if (!cJSON_IsObject(o) || !cJSON_IsString(st))
        return -1;
    snprintf(r->status, sizeof r->status, "%s", st->valuestring);
    r->run_id = get_str(o, "run_id");
    r->ranks = get_count(o, "ranks");
    r->hosts = get_count(o, "hosts");
    r->steps = get_count(o, "steps");
    r->median_step_s = get_num(o, "median_step_s");
    r->mfu = get_num(o, "mfu");
    r->verdict = get_str(o, "verdict");
    r->confidence = get_str(o, "confidence");
    r->lead_finding = get_str(o, "lead_finding");
    r->lead_finding_s = get_num(o, "lead_finding_s");
    r->top_recoverable = get_str(o, "top_recoverable");
    r->top_recoverable_s = get_num(o, "top_recoverable_s");
    r->exposed_comm_share = get_num(o, "exposed_comm_share");
    r->data_stall_share = get_num(o, "data_stall_share");
    r->straggler_rank = get_count(o, "straggler_rank");
    r->straggler_host = get_str(o, "straggler_host");
    r->straggler_cause = get_str(o, "straggler_cause");
    r->slow_host = get_str(o, "slow_host");
    r->slow_host_cause = get_str(o, "slow_host_cause");
    r->recoverable_gpu_hours = get_num(o, "recoverable_gpu_hours");
    r->problems = get_count(o, "problems");
    r->error = get_str(o, "error");
    r->cached = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "cached"));
    return 0;
}
