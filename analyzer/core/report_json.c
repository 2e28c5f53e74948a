/* The --json report; docs/report.md documents the schema (version 1).
 * Fields are only ever added, never renamed or removed. */
#include <cjson/cJSON.h>
#include <math.h>

#include "analysis.h"
#include "hang/hang.h"
#include "job_build.h"

#define TSA_JSON_SCHEMA_VERSION 1

static void num(cJSON *o, const char *k, double v)
{
    if (isnan(v) || isinf(v))
        cJSON_AddNullToObject(o, k);
    else
        cJSON_AddNumberToObject(o, k, v);
}

static void str(cJSON *o, const char *k, const char *v)
{
    if (v)
        cJSON_AddStringToObject(o, k, v);
    else
        cJSON_AddNullToObject(o, k);
}

static cJSON *budget_json(const tsa_budget *b)
{
    cJSON *o = cJSON_CreateObject();
    num(o, "wall_ns", (double)b->wall_ns);
    num(o, "mfu", b->mfu);
    cJSON *lines = cJSON_AddArrayToObject(o, "lines");
    for (int l = 0; l < TSA_BL_COUNT; l++) {
        cJSON *x = cJSON_CreateObject();
        str(x, "name", tsa_budget_line_name((tsa_budget_line)l));
        num(x, "ns", (double)b->line_ns[l]);
        cJSON_AddBoolToObject(x, "recoverable", tsa_budget_line_recoverable((tsa_budget_line)l));
        cJSON_AddItemToArray(lines, x);
    }
    return o;
}

static cJSON *overlap_json(const tsa_overlap *ov)
{
    cJSON *o = cJSON_CreateObject();
    num(o, "comm_ns", (double)ov->comm_ns);
    num(o, "overlapped_ns", (double)ov->overlapped_ns);
    num(o, "exposed_ns", (double)ov->exposed_ns);
    num(o, "exposed_wait_ns", (double)ov->exposed_wait_ns);
    num(o, "exposed_transfer_ns", (double)ov->exposed_transfer_ns);
    return o;
}

static void add_tables(cJSON *root, const tsa_analysis *a)
{
    cJSON *cats = cJSON_AddArrayToObject(root, "kernel_categories");
    for (int c = 0; c < TSA_KCAT_COUNT; c++) {
        cJSON *x = cJSON_CreateObject();
        str(x, "category", tsa_kcat_name((tsa_kcat)c));
        num(x, "ns", (double)a->kcat_ns[c]);
        num(x, "count", (double)a->kcat_count[c]);
        cJSON_AddItemToArray(cats, x);
    }
    cJSON *top = cJSON_AddArrayToObject(root, "top_kernels");
    for (size_t i = 0; i < a->n_kernels; i++) {
        cJSON *x = cJSON_CreateObject();
        str(x, "name", a->kernels[i].name);
        str(x, "category", tsa_kcat_name((tsa_kcat)a->kernels[i].category));
        num(x, "ns", (double)a->kernels[i].ns);
        num(x, "count", (double)a->kernels[i].count);
        cJSON_AddItemToArray(top, x);
    }
    cJSON *colls = cJSON_AddArrayToObject(root, "collectives");
    for (size_t i = 0; i < a->n_colls; i++) {
        const tsa_coll_row *c = &a->colls[i];
        cJSON *x = cJSON_CreateObject();
        str(x, "op", tsa_nccl_op_name(c->op));
        num(x, "count", (double)c->count);
        num(x, "bytes", (double)c->bytes);
        num(x, "ns", (double)c->ns);
        num(x, "busbw_gbps", c->busbw_gbps);
        num(x, "exposed_ns", (double)c->exposed_ns);
        num(x, "exposed_wait_ns", (double)c->exposed_wait_ns);
        cJSON *buckets = cJSON_AddArrayToObject(x, "size_buckets");
        for (int b = 0; b < TSA_SIZE_BUCKETS; b++) {
            if (!c->bucket_count[b])
                continue;
            cJSON *y = cJSON_CreateObject();
            str(y, "bucket", tsa_size_bucket_name(b));
            num(y, "count", (double)c->bucket_count[b]);
            num(y, "ns", (double)c->bucket_ns[b]);
            num(y, "exposed_ns", (double)c->bucket_exposed_ns[b]);
            cJSON_AddItemToArray(buckets, y);
        }
        cJSON_AddItemToArray(colls, x);
    }
    cJSON *copies = cJSON_AddArrayToObject(root, "copies");
    for (size_t i = 0; i < a->n_copies; i++) {
        cJSON *x = cJSON_CreateObject();
        str(x, "direction", tsa_copy_dir_name(a->copies[i].dir));
        num(x, "count", (double)a->copies[i].count);
        num(x, "bytes", (double)a->copies[i].bytes);
        num(x, "ns", (double)a->copies[i].ns);
        num(x, "gbps", a->copies[i].gbps);
        cJSON_AddItemToArray(copies, x);
    }
}

static void add_ranks(cJSON *root, const tsa_analysis *a)
{
    cJSON *ranks = cJSON_AddArrayToObject(root, "per_rank");
    for (size_t i = 0; i < a->n_ranks; i++) {
        const tsa_rank_result *r = &a->ranks[i];
        cJSON *x = cJSON_CreateObject();
        num(x, "rank", r->rank);
        str(x, "host", r->host);
        num(x, "steps_found", (double)r->steps_found);
        num(x, "window_start_ns", (double)r->window_start_ns);
        num(x, "window_end_ns", (double)r->window_end_ns);
        num(x, "median_step_ns", (double)r->median_step_ns);
        num(x, "flops", r->flops);
        cJSON_AddItemToObject(x, "budget", budget_json(&r->budget));
        cJSON_AddItemToObject(x, "overlap", overlap_json(&r->overlap));
        cJSON *ph = cJSON_AddObjectToObject(x, "phases_ns");
        for (int p = 1; p < TSA_PHASE_COUNT; p++)
            num(ph, tsa_phase_name((tsa_phase)p), (double)r->phase_ns[p]);
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
        num(x, "recoverable_s", f->recoverable_s);
        if (f->rank >= 0)
            num(x, "rank", f->rank);
        else
            cJSON_AddNullToObject(x, "rank");
        str(x, "title", f->title);
        str(x, "fix", f->fix);
        cJSON *n = cJSON_AddObjectToObject(x, "numbers");
        for (size_t k = 0; k < f->n_numbers; k++)
            num(n, f->numbers[k].name, f->numbers[k].value);
        tsa_hang_add_json(x, a->hang, f); /* DIST.HANG etc.: op, comm, seq, ranks */
        cJSON_AddItemToArray(arr, x);
    }
}

char *tsa_report_json(const tsa_analysis *a)
{
    const tsa_job *job = a->job;
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return NULL;
    num(root, "schema_version", TSA_JSON_SCHEMA_VERSION);
    str(root, "dir", job->dir);
    str(root, "run_id", job->run_id);
    num(root, "wall_ns", (double)a->wall_ns);
    num(root, "ranks", (double)job->n_ranks);
    num(root, "hosts", (double)a->hosts);
    num(root, "steps", (double)a->steps);
    cJSON *st = cJSON_AddObjectToObject(root, "step_detection");
    str(st, "method", tsa_step_method_name(a->method));
    num(st, "found", (double)a->steps_total);
    num(st, "warmup", a->warmup);
    num(st, "median_step_ns", (double)a->median_step_ns);
    num(st, "cv", a->step_cv);
    cJSON_AddBoolToObject(root, "gpu_records", a->gpu);
    cJSON *dev = cJSON_AddObjectToObject(root, "device");
    str(dev, "name", a->device_name);
    str(dev, "dtype", tsa_dtype_name(a->dtype));
    num(dev, "peak_flops", a->peak_flops > 0 ? a->peak_flops : NAN);
    str(dev, "peak_source", a->peak_source);
    num(root, "flops", a->flops > 0 ? a->flops : NAN);
    str(root, "flops_source", a->flops_source);
    cJSON_AddItemToObject(root, "budget", budget_json(&a->budget));
    cJSON_AddItemToObject(root, "overlap", overlap_json(&a->overlap));
    add_tables(root, a);
    cJSON *v = cJSON_AddObjectToObject(root, "verdict");
    str(v, "kind", tsa_verdict_name(a->verdict));
    str(v, "reason", a->verdict_reason);
    if (a->have_xrank)
        tsa_xrank_add_json(root, &a->xrank);
    add_findings(root, a);
    add_ranks(root, a);
    cJSON *other = cJSON_AddArrayToObject(root, "other_runs");
    for (size_t i = 0; i < job->n_other_runs; i++)
        cJSON_AddItemToArray(other, cJSON_CreateString(job->other_runs[i]));
    cJSON *probs = cJSON_AddArrayToObject(root, "problems");
    for (size_t i = 0; i < job->n_problems; i++) {
        cJSON *x = cJSON_CreateObject();
        str(x, "file", job->problems[i].file);
        num(x, "offset", (double)job->problems[i].offset);
        str(x, "message", job->problems[i].message);
        cJSON_AddItemToArray(probs, x);
    }
    char *s = cJSON_Print(root);
    cJSON_Delete(root);
    return s;
}
