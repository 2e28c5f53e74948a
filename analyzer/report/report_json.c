/* The --json report; docs/report.md documents the schema (version 1).
 * Fields are only ever added, never renamed or removed. */
#include <cjson/cJSON.h>
#include <math.h>

#include "model/analysis.h"
#include "passes/input_facts.h"
#include "passes/hta_view.h"
#include "idle_report.h"
#include "hang/hang.h"
#include "load/job_build.h"
#include "util/json_int.h"
#include "phase_view.h"
#include "records_cut_report.h"
#include "self_cost_report.h"
#include "telemetry_json.h"
#include "links_text.h"
#include "plugin_view.h"
#include "xrank_render.h"
#include "cause_render.h"
#include "memory_view.h"
#include "formats.h"
#include "hang_render.h"
#include "hta_render.h"
#include "pipe_render.h"

#define TSA_JSON_SCHEMA_VERSION 1

static void str(cJSON *o, const char *k, const char *v)
{
    if (v)
        cJSON_AddStringToObject(o, k, v);
    else
        cJSON_AddNullToObject(o, k);
}

static cJSON *budget_json(const tsa_budget *b, int gpu)
{
    cJSON *o = cJSON_CreateObject();
    tsa_json_add_i64(o, "wall_ns", b->wall_ns);
    tsa_json_add_num(o, "mfu", b->mfu);
    cJSON *lines = cJSON_AddArrayToObject(o, "lines");
    for (int l = 0; l < TSA_BL_COUNT; l++) {
        cJSON *x = cJSON_CreateObject();
        str(x, "name", tsa_budget_line_name((tsa_budget_line)l));
        tsa_json_add_i64(x, "ns", b->line_ns[l]);
        cJSON_AddBoolToObject(x, "recoverable", tsa_budget_line_recoverable((tsa_budget_line)l));
        cJSON_AddBoolToObject(x, "measured", tsa_budget_line_measured(b, (tsa_budget_line)l, gpu));
        cJSON_AddItemToArray(lines, x);
    }
    return o;
}

static cJSON *overlap_json(const tsa_overlap *ov)
{
    cJSON *o = cJSON_CreateObject();
    tsa_json_add_i64(o, "comm_ns", ov->comm_ns);
    tsa_json_add_i64(o, "overlapped_ns", ov->overlapped_ns);
    tsa_json_add_i64(o, "exposed_ns", ov->exposed_ns);
    tsa_json_add_i64(o, "exposed_wait_ns", ov->exposed_wait_ns);
    tsa_json_add_i64(o, "exposed_transfer_ns", ov->exposed_transfer_ns);
    /* null without communication: 0% would claim exposed communication */
    tsa_json_add_num(o, "overlap_pct", ov->comm_ns ? 100.0 * (double)ov->overlapped_ns / (double)ov->comm_ns
                                      : NAN);
    return o;
}

static void add_tables(cJSON *root, const tsa_analysis *a)
{
    cJSON *cats = cJSON_AddArrayToObject(root, "kernel_categories");
    for (int c = 0; c < TSA_KCAT_COUNT; c++) {
        cJSON *x = cJSON_CreateObject();
        str(x, "category", tsa_kcat_name((tsa_kcat)c));
        tsa_json_add_i64(x, "ns", a->kcat_ns[c]);
        tsa_json_add_u64(x, "count", a->kcat_count[c]);
        cJSON_AddItemToArray(cats, x);
    }
    cJSON *top = cJSON_AddArrayToObject(root, "top_kernels");
    for (size_t i = 0; i < a->n_kernels; i++) {
        cJSON *x = cJSON_CreateObject();
        str(x, "name", a->kernels[i].name);
        str(x, "category", tsa_kcat_name((tsa_kcat)a->kernels[i].category));
        tsa_json_add_i64(x, "ns", a->kernels[i].ns);
        tsa_json_add_u64(x, "count", a->kernels[i].count);
        cJSON_AddItemToArray(top, x);
    }
    cJSON *colls = cJSON_AddArrayToObject(root, "collectives");
    for (size_t i = 0; i < a->n_colls; i++) {
        const tsa_coll_row *c = &a->colls[i];
        cJSON *x = cJSON_CreateObject();
        str(x, "op", tsa_nccl_op_name(c->op));
        tsa_json_add_u64(x, "count", c->count);
        tsa_json_add_u64(x, "bytes", c->bytes);
        tsa_json_add_u64(x, "bytes_unknown_count", c->bytes_unknown);
        tsa_json_add_i64(x, "ns", c->ns);
        tsa_json_add_num(x, "busbw_gbps", c->busbw_gbps);
        tsa_json_add_i64(x, "exposed_ns", c->exposed_ns);
        tsa_json_add_i64(x, "exposed_wait_ns", c->exposed_wait_ns);
        cJSON *buckets = cJSON_AddArrayToObject(x, "size_buckets");
        for (int b = 0; b < TSA_SIZE_BUCKETS; b++) {
            if (!c->bucket_count[b])
                continue;
            cJSON *y = cJSON_CreateObject();
            str(y, "bucket", tsa_size_bucket_name(b));
            tsa_json_add_u64(y, "count", c->bucket_count[b]);
            tsa_json_add_i64(y, "ns", c->bucket_ns[b]);
            tsa_json_add_i64(y, "exposed_ns", c->bucket_exposed_ns[b]);
            cJSON_AddItemToArray(buckets, y);
        }
        cJSON_AddItemToArray(colls, x);
    }
    cJSON *copies = cJSON_AddArrayToObject(root, "copies");
    for (size_t i = 0; i < a->n_copies; i++) {
        cJSON *x = cJSON_CreateObject();
        str(x, "direction", tsa_copy_dir_name(a->copies[i].dir));
        tsa_json_add_u64(x, "count", a->copies[i].count);
        tsa_json_add_u64(x, "bytes", a->copies[i].bytes);
        tsa_json_add_u64(x, "bytes_unknown_count", a->copies[i].bytes_unknown);
        tsa_json_add_i64(x, "ns", a->copies[i].ns);
        tsa_json_add_num(x, "gbps", a->copies[i].gbps);
        cJSON_AddItemToArray(copies, x);
    }
}

static void add_ranks(cJSON *root, const tsa_analysis *a)
{
    cJSON *ranks = cJSON_AddArrayToObject(root, "per_rank");
    for (size_t i = 0; i < a->n_ranks; i++) {
        const tsa_rank_result *r = &a->ranks[i];
        cJSON *x = cJSON_CreateObject();
        tsa_json_add_num(x, "rank", r->rank);
        str(x, "host", r->host);
        tsa_json_add_num(x, "steps_found", (double)r->steps_found);
        tsa_json_add_i64(x, "window_start_ns", r->window_start_ns);
        tsa_json_add_i64(x, "window_end_ns", r->window_end_ns);
        tsa_json_add_i64(x, "median_step_ns", r->median_step_ns);
        tsa_json_add_num(x, "flops", r->flops);
        cJSON_AddItemToObject(x, "budget", budget_json(&r->budget, r->gpu));
        cJSON_AddItemToObject(x, "overlap", overlap_json(&r->overlap));
        /* Phases that were not measured are null (phase_view.h). */
        cJSON *ph = cJSON_AddObjectToObject(x, "phases_ns");
        for (int p = 1; p < TSA_PHASE_COUNT; p++) {
            if (tsa_phase_measured(a, (tsa_phase)p))
                tsa_json_add_i64(ph, tsa_phase_name((tsa_phase)p), r->phase_ns[p]);
            else
                cJSON_AddNullToObject(ph, tsa_phase_name((tsa_phase)p));
        }
        if (!tsa_phase_measured(a, TSA_PHASE_FORWARD))
            tsa_json_add_i64(ph, "compute", r->phase_ns[TSA_PHASE_FORWARD]);
        tsa_telemetry_json(x, a, i);
        tsa_self_cost_rank_json(x, a, i);
        cJSON_AddItemToArray(ranks, x);
    }
}

static void add_findings(cJSON *root, const tsa_analysis *a)
{
    cJSON *arr = cJSON_AddArrayToObject(root, "findings");
    for (size_t i = 0; i < a->findings.n; i++) {
        const tsa_finding *f = &a->findings.items[i];
        cJSON *x = cJSON_CreateObject();
        str(x, "id", f->id);
        str(x, "severity", tsa_severity_name(f->severity));
        tsa_json_add_num(x, "recoverable_s", f->recoverable_s);
        tsa_json_add_i64(x, "recoverable_ns", f->recoverable_ns);
        str(x, "confidence_cap", f->confidence_cap ? tsa_confidence_name(f->confidence_cap) : NULL);
        if (f->rank >= 0)
            tsa_json_add_num(x, "rank", f->rank);
        else
            cJSON_AddNullToObject(x, "rank");
        str(x, "title", f->title);
        str(x, "fix", f->fix);
        cJSON *n = cJSON_AddObjectToObject(x, "numbers");
        for (size_t k = 0; k < f->n_numbers; k++)
            tsa_json_add_num(n, f->numbers[k].name, f->numbers[k].value);
        cJSON *ev = cJSON_AddArrayToObject(x, "evidence");
        for (size_t k = 0; k < f->n_evidence; k++)
            cJSON_AddItemToArray(ev, cJSON_CreateString(f->evidence[k]));
        tsa_hang_add_json(x, a->hang, f); /* DIST.HANG etc.: op, comm, seq, ranks */
        cJSON_AddItemToArray(arr, x);
    }
}

/* "confidence": {"level", "reasons": [finding ids that lowered it]} */
static void add_confidence(cJSON *root, const tsa_analysis *a)
{
    cJSON *c = cJSON_AddObjectToObject(root, "confidence");
    str(c, "level", tsa_confidence_name(a->confidence));
    cJSON *why = cJSON_AddArrayToObject(c, "reasons");
    for (size_t i = 0; i < a->findings.n; i++)
        if (a->findings.items[i].confidence_cap != TSA_CONF_HIGH)
            cJSON_AddItemToArray(why, cJSON_CreateString(a->findings.items[i].id));
    cJSON *dup = cJSON_AddArrayToObject(root, "duplicate_ranks");
    for (size_t i = 0; i < a->job->n_duplicates; i++) {
        cJSON *x = cJSON_CreateObject();
        tsa_json_add_num(x, "rank", a->job->duplicates[i].rank);
        str(x, "kept", a->job->duplicates[i].kept_file);
        str(x, "left_out", a->job->duplicates[i].dropped_file);
        cJSON_AddItemToArray(dup, x);
    }
}

static void add_throughput(cJSON *root, const tsa_analysis *a)
{
    const tsa_throughput *t = &a->throughput;
    cJSON *o = cJSON_AddObjectToObject(root, "throughput");
    tsa_json_add_num(o, "steps_per_s", t->steps_per_s);
    tsa_json_add_num(o, "samples_per_s", t->samples_per_s);
    tsa_json_add_num(o, "tokens_per_s", t->tokens_per_s);
    /* No steps: no step time to take percentiles of (null, never 0). */
    const char *pct[] = {"step_p50_ns", "step_p95_ns", "step_p99_ns"};
    const int64_t val[] = {t->step_p50_ns, t->step_p95_ns, t->step_p99_ns};
    for (int i = 0; i < 3; i++)
        if (t->n_steps)
            tsa_json_add_i64(o, pct[i], val[i]);
        else
            cJSON_AddNullToObject(o, pct[i]);
    cJSON *steps = cJSON_AddArrayToObject(o, "step_ns");
    for (size_t i = 0; i < t->n_steps; i++)
        cJSON_AddItemToArray(steps, tsa_json_i64(t->step_ns[i]));
}

char *tsa_report_json(const tsa_analysis *a)
{
    const tsa_job *job = a->job;
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return NULL;
    tsa_json_add_num(root, "schema_version", TSA_JSON_SCHEMA_VERSION);
    str(root, "dir", job->dir);
    str(root, "run_id", job->run_id);
    tsa_json_add_i64(root, "wall_ns", a->wall_ns);
    tsa_json_add_num(root, "ranks", (double)job->n_ranks);
    tsa_json_add_num(root, "hosts", (double)a->hosts);
    tsa_json_add_num(root, "steps", (double)a->steps);
    cJSON *st = cJSON_AddObjectToObject(root, "step_detection");
    str(st, "method", tsa_step_method_name(a->method));
    tsa_json_add_num(st, "found", (double)a->steps_total);
    tsa_json_add_num(st, "warmup", a->warmup);
    /* Without steps the window is the whole run: no step median or cv. */
    if (a->method == TSA_STEPS_NONE) {
        cJSON_AddNullToObject(st, "median_step_ns");
        cJSON_AddNullToObject(st, "cv");
        tsa_json_add_i64(st, "startup_ns", tsa_startup_ns(a));
    } else {
        tsa_json_add_i64(st, "median_step_ns", a->median_step_ns);
        tsa_json_add_num(st, "cv", a->step_cv);
    }
    cJSON_AddBoolToObject(root, "gpu_records", a->gpu);
    cJSON *dev = cJSON_AddObjectToObject(root, "device");
    str(dev, "name", a->device_name);
    str(dev, "dtype", tsa_dtype_name(a->dtype));
    tsa_json_add_num(dev, "peak_flops", a->peak_flops > 0 ? a->peak_flops : NAN);
    str(dev, "peak_source", a->peak_source);
    tsa_json_add_num(root, "flops", a->flops > 0 ? a->flops : NAN);
    str(root, "flops_source", a->flops_source);
    cJSON_AddItemToObject(root, "budget", budget_json(&a->budget, a->gpu));
    cJSON_AddItemToObject(root, "overlap", overlap_json(&a->overlap));
    tsa_idle_add_json(root, a);
    add_tables(root, a);
    cJSON *v = cJSON_AddObjectToObject(root, "verdict");
    str(v, "kind", tsa_verdict_name(a->verdict));
    str(v, "reason", a->verdict_reason);
    if (a->verdict_rank >= 0)
        tsa_json_add_num(v, "rank", a->verdict_rank);
    else
        cJSON_AddNullToObject(v, "rank");
    str(v, "host", a->verdict_host);
    add_confidence(root, a);
    add_throughput(root, a);
    str(v, "partial", a->partial[0] ? a->partial : NULL);
    cJSON_AddBoolToObject(root, "cpu_only", a->cpu_only);
    tsa_hta_view_add_json(root, a);
    if (a->have_xrank) {
        tsa_xrank_add_json(root, &a->xrank);
        tsa_cause_add_json(root, &a->cause);
    }
    tsa_pipe_add_json(root, a->pipe);
    add_findings(root, a);
    add_ranks(root, a);
    tsa_self_cost_add_json(root, a);
    tsa_records_cut_add_json(root, a);
    cJSON_AddItemToObject(root, "memory", tsa_memory_json(&a->memory));
    cJSON *links = tsa_links_json(a);
    if (links) /* only with NCCL profiler plugin proxy records */
        cJSON_AddItemToObject(root, "links", links);
    cJSON *plugin = tsa_plugin_json(a);
    if (plugin) /* only with NCCL profiler plugin records */
        cJSON_AddItemToObject(root, "nccl_plugin", plugin);
    cJSON *other = cJSON_AddArrayToObject(root, "other_runs");
    for (size_t i = 0; i < job->n_other_runs; i++)
        cJSON_AddItemToArray(other, cJSON_CreateString(job->other_runs[i]));
    cJSON *probs = cJSON_AddArrayToObject(root, "problems");
    for (size_t i = 0; i < job->n_problems; i++) {
        cJSON *x = cJSON_CreateObject();
        str(x, "file", job->problems[i].file);
        tsa_json_add_u64(x, "offset", job->problems[i].offset);
        str(x, "message", job->problems[i].message);
        cJSON_AddItemToArray(probs, x);
    }
    char *s = cJSON_Print(root);
    cJSON_Delete(root);
    return s;
}

int tsa_report_write_json(FILE *out, const tsa_analysis *a, int color)
{
    (void)color;
    char *s = tsa_report_json(a);
    if (!s)
        return -1;
    fputs(s, out);
    fputc('\n', out);
    free(s);
    return 0;
}
