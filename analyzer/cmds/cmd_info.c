/* tscope-report info [--json] DIR|FILE... : what each dump holds and
 * whether it is healthy (metadata, counts, threads, dropped events, clean
 * close, problems with their offsets). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "commands.h"
#include "model/self_cost.h"
#include "reader/dump_reader.h"
#include "reader/gpu_loss.h"
#include "reader_cli.h"
#include "reader/record_json.h"
#include "reader/text_visible.h"
#include "reader/u64_map.h"
#include "util/json_int.h"

typedef struct info_problem {
    uint64_t offset;
    char *message;
} info_problem;

typedef struct info_thread {
    uint32_t tid;
    char *name; /* NULL when no thread descriptor named it */
} info_thread;

typedef struct file_info {
    info_problem *problems;
    size_t n_problems;
    info_thread *threads;
    size_t n_threads, cap_threads;
    tsr_u64_map tid_index; /* tid -> index in threads */
    uint64_t first_ns, last_ns;
    tsr_gpu_counts gpu;
    tsr_u64_map kernel_corr;         /* correlation ids of plain kernel records */
    uint32_t *launch_corr;           /* of launch calls written as API records */
    size_t n_launch, cap_launch;
    int oom;
} file_info;

static void usage(FILE *out)
{
    fprintf(out, "usage: tscope-report info [--json] DIR|FILE...\n"
                 "  Per dump: metadata, counts per event kind, threads, dropped events,\n"
                 "  clean close, and problems (file offset + message).\n"
                 "Exit status: 0 all clean, 1 problems found, 2 nothing readable or bad usage.\n");
}

static info_thread *thread_slot(file_info *fi, uint32_t tid)
{
    uint64_t i;
    if (tsr_u64_map_get(&fi->tid_index, tid, &i))
        return &fi->threads[i];
    size_t n = fi->n_threads;
    if (n == fi->cap_threads) {
        size_t cap = n ? 2 * n : 8;
        info_thread *t = realloc(fi->threads, cap * sizeof *t);
        if (!t)
            return NULL;
        fi->threads = t;
        fi->cap_threads = cap;
    }
    if (tsr_u64_map_put(&fi->tid_index, tid, n) != 0)
        return NULL;
    fi->threads[n] = (info_thread){.tid = tid};
    fi->n_threads++;
    return &fi->threads[n];
}

/* Kernels, and launch calls that might have lost theirs (gpu_loss.h). */
static void note_gpu(file_info *fi, const tsr_file *f, const tsr_event *e)
{
    tsc_desc_api a;
    if (e->kind == TSC_EV_KERNEL_LAUNCH) {
        fi->gpu.kernels++;
    } else if (e->kind == TSC_EV_KERNEL) {
        fi->gpu.kernels++;
        if (tsr_u64_map_put(&fi->kernel_corr, (uint32_t)e->val, 1))
            fi->oom = 1;
    } else if (e->kind == TSC_EV_API && tsr_decode_api(e->desc, &a) == 0 &&
               tsr_is_launch_call(tsr_string(f, a.name))) {
        if (fi->n_launch == fi->cap_launch) {
            size_t cap = fi->cap_launch ? 2 * fi->cap_launch : 256;
            uint32_t *p = realloc(fi->launch_corr, cap * sizeof *p);
            if (!p) {
                fi->oom = 1;
                return;
            }
            fi->launch_corr = p;
            fi->cap_launch = cap;
        }
        fi->launch_corr[fi->n_launch++] = (uint32_t)e->val;
    }
}

static void on_event(void *ctx, const tsr_file *f, const tsr_event *e)
{
    file_info *fi = ctx;
    /* the span: records whose start/end are times (a plugin wait's hold
     * durations), not the clock pairs */
    if (tsc_event_has_times(e->kind) && e->kind != TSC_EV_CLOCK && e->start_ns) {
        if (!fi->first_ns || e->start_ns < fi->first_ns)
            fi->first_ns = e->start_ns;
        if (e->end_ns > fi->last_ns)
            fi->last_ns = e->end_ns;
    }
    if (e->kind == TSC_EV_NCCL || e->kind == TSC_EV_GEMM || e->kind == TSC_EV_NVTX ||
        e->kind == TSC_EV_EXTCORR) {
        if (!thread_slot(fi, e->tid))
            fi->oom = 1;
    }
    note_gpu(fi, f, e);
}

static void on_desc(void *ctx, const tsr_file *f, const tsr_desc *d)
{
    (void)f;
    file_info *fi = ctx;
    uint32_t tid;
    const char *name;
    size_t len;
    if (tsr_decode_thread(d, &tid, &name, &len) != 0)
        return;
    info_thread *t = thread_slot(fi, tid);
    char *copy = t ? strndup(name, len) : NULL;
    if (!copy) {
        fi->oom = 1;
        return;
    }
    free(t->name);
    t->name = copy;
}

static void on_problem(void *ctx, const char *path, uint64_t off, const char *msg)
{
    (void)path;
    file_info *fi = ctx;
    info_problem *p = realloc(fi->problems, (fi->n_problems + 1) * sizeof *p);
    if (!p) {
        fi->oom = 1;
        return;
    }
    fi->problems = p;
    p[fi->n_problems].offset = off;
    if ((p[fi->n_problems].message = strdup(msg)))
        fi->n_problems++;
}

static void file_info_free(file_info *fi)
{
    for (size_t i = 0; i < fi->n_problems; i++)
        free(fi->problems[i].message);
    for (size_t i = 0; i < fi->n_threads; i++)
        free(fi->threads[i].name);
    free(fi->problems);
    free(fi->threads);
    tsr_u64_map_free(&fi->tid_index);
    tsr_u64_map_free(&fi->kernel_corr);
    free(fi->launch_corr);
}

static const char *status_name(int st)
{
    return st == TSR_OK ? "ok" : st == TSR_PROBLEMS ? "problems" : "unreadable";
}

/* Kernels in the dump and kernels lost, with where they were lost. */
static void gpu_json(cJSON *o, const tsr_file *f, const file_info *fi)
{
    tsr_gpu_counts c = fi->gpu;
    for (size_t i = 0; i < tsr_meta_count(f); i++) {
        const char *k, *v;
        if (tsr_meta_at(f, i, &k, &v) == 0)
            tsr_gpu_counts_meta(&c, k, v);
    }
    uint64_t one;
    for (size_t i = 0; i < fi->n_launch; i++)
        c.launches_unmatched += !tsr_u64_map_get(&fi->kernel_corr, fi->launch_corr[i], &one);
    if (!c.traced && !c.kernels)
        return;
    cJSON *g = cJSON_AddObjectToObject(o, "gpu");
    uint64_t lost = tsr_gpu_kernels_lost(&c);
    tsa_json_add_u64(g, "kernels", c.kernels);
    tsa_json_add_u64(g, "kernels_lost", lost);
    tsa_json_add_u64(g, "launches_without_kernel", c.launches_unmatched);
    tsa_json_add_u64(g, "launches_captured", c.captured);
    tsa_json_add_u64(g, "records_incomplete", c.incomplete);
    tsa_json_add_u64(g, "kernels_lost_write", c.lost_write);
    tsa_json_add_u64(g, "cupti_dropped_device_records", c.dropped_device);
}

/* The whole description of one file as JSON (also the source of the text). */
static cJSON *describe(const char *path, const tsr_file *f, const tsr_stats *s,
                       const file_info *fi, int status)
{
    cJSON *o = cJSON_CreateObject();
    tsr_json_add_text(o, "path", path);
    cJSON_AddStringToObject(o, "status", status_name(status));
    cJSON *probs = cJSON_AddArrayToObject(o, "problems");
    for (size_t i = 0; i < fi->n_problems; i++) {
        cJSON *p = cJSON_CreateObject();
        tsa_json_add_u64(p, "offset", fi->problems[i].offset);
        tsr_json_add_text(p, "message", fi->problems[i].message);
        cJSON_AddItemToArray(probs, p);
    }
    if (!f)
        return o;
    char buf[64];
    tsa_json_add_u64(o, "size", s->file_size);
    snprintf(buf, sizeof buf, "%u.%u", s->version_major, s->version_minor);
    cJSON_AddStringToObject(o, "format", buf);
    tsa_json_add_u64(o, "header_pid", s->pid);
    cJSON_AddStringToObject(o, "created",
                            tsr_format_iso8601(s->created_realtime_ns, buf, sizeof buf));
    const char *start = tsr_meta(f, TSC_META_START_REALTIME);
    if (start)
        cJSON_AddStringToObject(o, "started",
                                tsr_format_iso8601(strtoull(start, NULL, 10), buf, sizeof buf));
    cJSON *meta = cJSON_AddObjectToObject(o, "meta");
    for (size_t i = 0; i < tsr_meta_count(f); i++) {
        const char *k, *v;
        if (tsr_meta_at(f, i, &k, &v) != 0)
            continue;
        char *ck = tsr_utf8_valid(k) ? NULL : tsr_utf8_clean_dup(k);
        tsr_json_add_text(meta, ck ? ck : k, v);
        free(ck);
    }
    cJSON *ev = cJSON_AddObjectToObject(o, "events");
    tsa_json_add_u64(ev, "total", s->events);
    for (int k = 0; k < 256; k++)
        if (s->events_by_kind[k])
            tsa_json_add_u64(ev, tsr_event_kind_name((uint8_t)k), s->events_by_kind[k]);
    tsa_json_add_u64(o, "unknown_event_kinds", s->unknown_events);
    tsa_json_add_u64(o, "undefined_desc_refs", s->undefined_refs);
    if (fi->first_ns) {
        tsa_json_add_u64(o, "first_ns", fi->first_ns);
        tsa_json_add_u64(o, "last_ns", fi->last_ns);
    }
    cJSON *de = cJSON_AddObjectToObject(o, "descriptors");
    tsa_json_add_u64(de, "total", s->descs);
    for (int t = 0; t < 256; t++) {
        if (!s->descs_by_type[t])
            continue;
        const char *n = tsr_desc_type_name((uint8_t)t);
        snprintf(buf, sizeof buf, "type_%d", t);
        tsa_json_add_u64(de, n ? n : buf, s->descs_by_type[t]);
    }
    tsa_json_add_u64(de, "refused", s->bad_descs);
    cJSON *th = cJSON_AddArrayToObject(o, "threads");
    for (size_t i = 0; i < fi->n_threads; i++) {
        cJSON *t = cJSON_CreateObject();
        tsa_json_add_u64(t, "tid", fi->threads[i].tid);
        tsr_json_add_text(t, "name", fi->threads[i].name);
        cJSON_AddItemToArray(th, t);
    }
    const char *dropped = tsr_meta(f, TSC_META_DROPPED);
    tsa_json_add_u64(o, "dropped_events", dropped ? strtoull(dropped, NULL, 10) : 0);
    gpu_json(o, f, fi);
    cJSON_AddBoolToObject(o, "clean_end", s->clean_end);
    const char *reason = tsr_meta(f, TSC_META_END_REASON);
    if (reason)
        tsr_json_add_text(o, "end_reason", reason);
    cJSON *ch = cJSON_AddObjectToObject(o, "chunks");
    tsa_json_add_u64(ch, "total", s->chunks);
    tsa_json_add_u64(ch, "meta", s->meta_chunks);
    tsa_json_add_u64(ch, "events", s->event_chunks);
    tsa_json_add_u64(ch, "end", s->end_chunks);
    tsa_json_add_u64(ch, "unknown", s->unknown_chunks);
    tsa_json_add_u64(ch, "bad", s->bad_chunks);
    tsa_json_add_u64(ch, "missing", s->missing_chunks);
    tsa_json_add_u64(ch, "bytes_skipped", s->bytes_skipped);
    tsa_json_add_u64(o, "problem_count", s->problems);
    return o;
}

/* A string member for the text output, shown visibly (text_visible.h):
 * dump strings may hold escape sequences and newlines. */
static const char *str(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? tsr_vis(v->valuestring) : NULL;
}

/* Integers are stored as raw JSON text (exact 64-bit), not doubles. */
static uint64_t raw_u64(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (cJSON_IsRaw(v) && v->valuestring)
        return strtoull(v->valuestring, NULL, 10);
    return cJSON_IsNumber(v) ? (uint64_t)v->valuedouble : 0;
}

static const char *meta_or(const cJSON *meta, const char *k, const char *dflt)
{
    const char *v = str(meta, k);
    return v ? v : dflt;
}

/* Print "  label   k1 v1, k2 v2" for the numeric members of an object. */
static void print_counts(FILE *out, const char *label, const cJSON *o)
{
    fprintf(out, "  %-12s", label);
    const char *sep = " ";
    for (const cJSON *c = o ? o->child : NULL; c; c = c->next) {
        char *v = cJSON_PrintUnformatted(c);
        fprintf(out, "%s%s %s", sep, c->string, v ? v : "?");
        free(v);
        sep = ", ";
    }
    fputc('\n', out);
}

/* Keys print_text shows on their own lines; the rest go to "other meta". */
static int shown_key(const char *k)
{
    static const char *const shown[] = {
        TSC_META_HOST, TSC_META_PID, TSC_META_PPID, TSC_META_RANK, TSC_META_LOCAL_RANK,
        TSC_META_WORLD_SIZE, TSC_META_RUN_ID, TSC_META_RUN_ID_SOURCE, TSC_META_RESTART,
        TSC_META_CMDLINE, TSC_META_START_REALTIME, TSC_META_LIB_VERSION,
        TSC_META_NCCL_VERSION, TSC_META_CUDA_DRIVER, TSC_META_CUDA_RUNTIME,
        TSC_META_CUPTI_MODE, TSC_META_CUPTI_STATUS, TSC_META_CUPTI_DROPPED,
        TSC_META_CLOCK_STATUS, TSC_META_DEVICE_NAME, TSC_META_DEVICE_SM_COUNT,
        TSC_META_DEVICE_CLOCK_KHZ, TSC_META_DEVICE_MEM_BYTES, TSC_META_DROPPED,
        TSC_META_DROPPED_WRITE, TSC_META_END_REASON, TSC_META_CUPTI_DROPPED_DEVICE,
        TSC_META_GPU_CAPTURED, TSC_META_GPU_INCOMPLETE, TSC_META_GPU_LOST_WRITE,
        TSC_META_CUPTI_OTHER};
    for (size_t i = 0; i < sizeof shown / sizeof shown[0]; i++)
        if (!strcmp(k, shown[i]))
            return 1;
    tsa_self_cost scratch = {0};
    return tsa_self_cost_on_meta(&scratch, k, "0"); /* the "own cost" line */
}

/* "own cost" and the budget's level changes (model/self_cost.h). */
static void print_self_cost(FILE *out, const cJSON *meta, uint64_t start_ns)
{
    tsa_self_cost c = {0};
    for (const cJSON *m = meta ? meta->child : NULL; m; m = m->next)
        if (cJSON_IsString(m))
            tsa_self_cost_on_meta(&c, m->string, m->valuestring);
    fprintf(out, "  %-12s ", "own cost");
    tsa_self_cost_print(out, &c, 0);
    fputc('\n', out);
    tsa_self_cost_print_steps(out, &c, (int64_t)(start_ns & INT64_MAX), "               ");
}

static void print_other_meta(FILE *out, const cJSON *meta)
{
    int any = 0;
    for (const cJSON *c = meta ? meta->child : NULL; c; c = c->next) {
        if (shown_key(c->string) || !cJSON_IsString(c))
            continue;
        fprintf(out, "%s%s=%s", any ? ", " : "  other meta  ", tsr_vis(c->string),
                tsr_vis(c->valuestring));
        any = 1;
    }
    if (any)
        fputc('\n', out);
}

/* "kernels lost: N of M" whenever anything was lost, never a 0 beside a
 * loss; CUPTI's dropped device records apart (their kind is unknown). */
static void print_gpu(FILE *out, const cJSON *g)
{
    if (!g)
        return;
    uint64_t kernels = raw_u64(g, "kernels"), lost = raw_u64(g, "kernels_lost");
    uint64_t dropped = raw_u64(g, "cupti_dropped_device_records");
    fprintf(out, "  %-12s %" PRIu64 " kernels", "gpu", kernels);
    if (lost)
        fprintf(out, "; kernels lost: %" PRIu64 " of %" PRIu64 " (%" PRIu64
                     " launches without their kernel, %" PRIu64 " of them captured into graphs; %"
                     PRIu64 " lost to write errors)",
                lost, kernels + lost, raw_u64(g, "launches_without_kernel"),
                raw_u64(g, "launches_captured"), raw_u64(g, "kernels_lost_write"));
    else
        fprintf(out, ", none lost");
    if (dropped)
        fprintf(out, "; CUPTI dropped %" PRIu64 " device records (kernels, copies or memsets)",
                dropped);
    fputc('\n', out);
}

static void print_text(FILE *out, const cJSON *o)
{
    fprintf(out, "%s\n", str(o, "path"));
    const cJSON *size = cJSON_GetObjectItemCaseSensitive(o, "size");
    if (size) {
        const cJSON *meta = cJSON_GetObjectItemCaseSensitive(o, "meta");
        char *sz = cJSON_PrintUnformatted(size);
        fprintf(out, "  %-12s %s bytes, format %s, created %s\n", "file", sz, str(o, "format"),
                str(o, "created"));
        free(sz);
        fprintf(out, "  %-12s %s, pid %s, ppid %s\n", "host", meta_or(meta, "host", "?"),
                meta_or(meta, "pid", "?"), meta_or(meta, "ppid", "?"));
        fprintf(out, "  %-12s %s (local %s) of world %s\n", "rank", meta_or(meta, "rank", "?"),
                meta_or(meta, "local_rank", "?"), meta_or(meta, "world_size", "?"));
        fprintf(out, "  %-12s %s (source %s), restart %s\n", "run", meta_or(meta, "run_id", "?"),
                meta_or(meta, "run_id_source", "?"), meta_or(meta, "restart", "?"));
        fprintf(out, "  %-12s %s\n", "cmdline", meta_or(meta, "cmdline", "?"));
        fprintf(out, "  %-12s %s\n", "started", str(o, "started") ? str(o, "started") : "?");
        fprintf(out, "  %-12s tscope %s, nccl %s, cuda driver %s, runtime %s\n", "versions",
                meta_or(meta, "tscope_version", "?"), meta_or(meta, "nccl_version", "?"),
                meta_or(meta, "cuda_driver_version", "?"),
                meta_or(meta, "cuda_runtime_version", "?"));
        fprintf(out, "  %-12s mode %s, status %s, dropped records %s, clock %s\n", "cupti",
                meta_or(meta, "cupti_mode", "?"), meta_or(meta, "cupti_status", "?"),
                meta_or(meta, "cupti_dropped_records", "0"), meta_or(meta, "clock_status", "?"));
        if (meta_or(meta, TSC_META_CUPTI_OTHER, NULL))
            fprintf(out, "  %-12s %s held CUPTI: tscope's GPU timeline is missing or cut\n",
                     "cupti client", tsr_vis(meta_or(meta, TSC_META_CUPTI_OTHER, "?")));
        fprintf(out, "  %-12s %s, %s SMs, %s kHz, %s bytes\n", "device",
                meta_or(meta, "device_name", "?"), meta_or(meta, "device_sm_count", "?"),
                meta_or(meta, "device_clock_khz", "?"), meta_or(meta, "device_mem_bytes", "?"));
        print_counts(out, "events", cJSON_GetObjectItemCaseSensitive(o, "events"));
        print_gpu(out, cJSON_GetObjectItemCaseSensitive(o, "gpu"));
        uint64_t f0 = raw_u64(o, "first_ns"), f1 = raw_u64(o, "last_ns");
        if (f0 && f1) {
            char a[40], b[40];
            fprintf(out, "  %-12s %s .. %s (%.3f s)\n", "span", tsr_format_iso8601(f0, a, sizeof a),
                    tsr_format_iso8601(f1, b, sizeof b), f1 > f0 ? (double)(f1 - f0) / 1e9 : 0.0);
        }
        uint64_t unk = raw_u64(o, "unknown_event_kinds"), undef = raw_u64(o, "undefined_desc_refs");
        if (unk || undef)
            fprintf(out, "  %-12s %" PRIu64 " of unknown kinds, %" PRIu64
                         " with undefined descriptors\n", "bad events", unk, undef);
        print_counts(out, "descriptors", cJSON_GetObjectItemCaseSensitive(o, "descriptors"));
        const cJSON *th = cJSON_GetObjectItemCaseSensitive(o, "threads");
        fprintf(out, "  %-12s %d:", "threads", cJSON_GetArraySize(th));
        const cJSON *t;
        cJSON_ArrayForEach(t, th)
        {
            const cJSON *tid = cJSON_GetObjectItemCaseSensitive(t, "tid");
            char *v = cJSON_PrintUnformatted(tid);
            fprintf(out, " %s (%s)", v ? v : "?", str(t, "name") ? str(t, "name") : "unnamed");
            free(v);
        }
        fputc('\n', out);
        fprintf(out, "  %-12s %s events, %s write bytes lost\n", "dropped",
                meta_or(meta, "dropped_events", "0"), meta_or(meta, "dropped_write_bytes", "0"));
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "clean_end")))
            fprintf(out, "  %-12s cleanly (end_reason %s)\n", "closed",
                    str(o, "end_reason") ? str(o, "end_reason") : "?");
        else
            fprintf(out, "  %-12s no END chunk (process killed, or still running)\n", "closed");
        print_counts(out, "chunks", cJSON_GetObjectItemCaseSensitive(o, "chunks"));
        print_self_cost(out, meta, strtoull(meta_or(meta, TSC_META_START_REALTIME, "0"), NULL, 10));
        print_other_meta(out, meta);
    }
    const cJSON *probs = cJSON_GetObjectItemCaseSensitive(o, "problems");
    if (cJSON_GetArraySize(probs) == 0) {
        fprintf(out, "  %-12s none\n", "problems");
    } else {
        fprintf(out, "  %-12s\n", "problems");
        const cJSON *p;
        cJSON_ArrayForEach(p, probs)
        {
            char *off = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(p, "offset"));
            fprintf(out, "    %s: offset %s: %s\n", str(o, "path"), off ? off : "?",
                    str(p, "message"));
            free(off);
        }
    }
}

/* TSR_* status of one file; its description is added to `files`. */
static int info_one(const char *path, cJSON *files)
{
    file_info fi = {0};
    tsr_callbacks cb = {.on_event = on_event, .on_desc = on_desc, .on_problem = on_problem};
    int status;
    tsr_file *f = tsr_open(path, &cb, &fi, &status);
    if (f)
        status = tsr_read_all(f);
    cJSON *o = describe(path, f, f ? tsr_file_stats(f) : NULL, &fi, status);
    if (fi.oom)
        cJSON_AddStringToObject(o, "warning", "out of memory: description incomplete");
    cJSON_AddItemToArray(files, o);
    tsr_close(f);
    file_info_free(&fi);
    return status;
}

int tsa_cmd_info(int argc, char **argv)
{
    int json = 0;
    const tsr_cli_flag flags[] = {{"--json", &json}, {NULL, NULL}};
    const tsr_cli cli = {"info", flags, usage};
    char **paths;
    size_t n, errors;
    int rc = tsr_cli_parse(&cli, argc, argv, &paths, &n, &errors);
    if (rc >= 0)
        return rc;
    cJSON *root = cJSON_CreateObject();
    cJSON *files = cJSON_AddArrayToObject(root, "files");
    size_t readable = 0, with_problems = 0;
    for (size_t k = 0; k < n; k++) {
        int st = info_one(paths[k], files);
        readable += st != TSR_UNREADABLE;
        with_problems += st != TSR_OK;
    }
    tsr_free_paths(paths, n);
    rc = readable == 0 ? 2 : (with_problems || errors) ? 1 : 0;
    cJSON_AddNumberToObject(root, "exit_status", rc);
    tsr_cli_print_files(root, json, print_text);
    cJSON_Delete(root);
    return rc;
}
