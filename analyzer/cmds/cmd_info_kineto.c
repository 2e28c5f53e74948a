/* `tscope-report info` on torch.profiler traces: per trace file, what the
 * analyzer reads from it (rank, device, counts of GPU and host records,
 * steps, span) and whether it parsed to the end.  Paths that are not
 * Kineto traces or directories of them go to the dump `info`. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "commands.h"
#include "load/job_build.h"
#include "load/kineto_load.h"
#include "reader_cli.h"
#include "util/cmp.h"
#include "util/json_int.h"

/* 1 when path is a trace file or a directory holding traces. */
static int is_kineto_path(const char *path)
{
    struct stat st;
    if (stat(path, &st))
        return 0;
    if (S_ISDIR(st.st_mode))
        return tsa_kineto_dir(path) > 0;
    return S_ISREG(st.st_mode) && (tsa_ends_with(path, ".json") || tsa_ends_with(path, ".json.gz"));
}

static size_t count_nccl_kernels(const tsa_rank *r)
{
    size_t n = 0;
    for (size_t i = 0; i < r->n_kernels; i++)
        n += r->kernels[i].category == TSA_KCAT_COMM;
    return n;
}

static size_t count_steps(const tsa_rank *r)
{
    size_t n = 0;
    for (size_t i = 0; i < r->n_ranges; i++)
        n += !strncmp(tsa_rank_string(r, r->ranges[i].name), "ProfilerStep#", 13);
    return n;
}

/* One file's description; *problem set when it did not parse cleanly. */
static cJSON *describe(const char *path, int *problem)
{
    tsa_rank r;
    tsa_kineto_stats stats = {0};
    char err[512] = "";
    int rc = tsa_kineto_load_file(path, &r, &stats, err, sizeof err);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "path", path);
    cJSON_AddStringToObject(o, "kind", "torch.profiler trace");
    cJSON_AddStringToObject(o, "status", rc ? "problems" : "ok");
    tsa_json_add_u64(o, "json_bytes", stats.bytes);
    tsa_json_add_u64(o, "events", stats.events);
    if (r.rank >= 0)
        cJSON_AddNumberToObject(o, "rank", r.rank);
    else
        cJSON_AddNullToObject(o, "rank");
    if (r.world_size > 0)
        cJSON_AddNumberToObject(o, "world_size", r.world_size);
    else
        cJSON_AddNullToObject(o, "world_size");
    if (r.device_name)
        cJSON_AddStringToObject(o, "device", r.device_name);
    else
        cJSON_AddNullToObject(o, "device");
    cJSON *c = cJSON_AddObjectToObject(o, "records");
    tsa_json_add_u64(c, "kernels", r.n_kernels);
    tsa_json_add_u64(c, "nccl_kernels", count_nccl_kernels(&r));
    tsa_json_add_u64(c, "copies", r.n_copies);
    tsa_json_add_u64(c, "launch_calls", r.n_apis);
    tsa_json_add_u64(c, "syncs", r.n_syncs);
    tsa_json_add_u64(c, "ranges", r.n_ranges);
    tsa_json_add_u64(c, "profiler_steps", count_steps(&r));
    tsa_json_add_u64(c, "threads", r.n_threads);
    cJSON_AddBoolToObject(o, "gpu_records", r.n_kernels || r.n_copies);
    if (r.last_ns > r.first_ns) {
        tsa_json_add_u64(o, "first_ns", (uint64_t)r.first_ns);
        tsa_json_add_u64(o, "last_ns", (uint64_t)r.last_ns);
    }
    cJSON_AddBoolToObject(o, "clean_end", rc == 0);
    cJSON *probs = cJSON_AddArrayToObject(o, "problems");
    if (rc)
        cJSON_AddItemToArray(probs, cJSON_CreateString(err));
    *problem = rc != 0;
    tsa_rank_free_contents(&r);
    return o;
}

static const char *text(const cJSON *o, const char *k, const char *dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : dflt;
}

static double number(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (cJSON_IsRaw(v) && v->valuestring)
        return strtod(v->valuestring, NULL);
    return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

static void print_text(FILE *out, const cJSON *o)
{
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(o, "records");
    fprintf(out, "%s\n", text(o, "path", "?"));
    fprintf(out, "  %-12s torch.profiler (Kineto) trace, %.0f JSON bytes, %.0f events\n",
            "file", number(o, "json_bytes"), number(o, "events"));
    double rank = number(o, "rank"), ws = number(o, "world_size");
    char rs[32] = "?", wss[32] = "?";
    if (rank >= 0)
        snprintf(rs, sizeof rs, "%.0f", rank);
    if (ws > 0)
        snprintf(wss, sizeof wss, "%.0f", ws);
    fprintf(out, "  %-12s %s of world %s\n", "rank", rs, wss);
    fprintf(out, "  %-12s %s\n", "device", text(o, "device", "?"));
    fprintf(out, "  %-12s kernels %.0f (NCCL %.0f), copies %.0f, launch calls %.0f, syncs %.0f\n",
            "GPU records", number(c, "kernels"), number(c, "nccl_kernels"), number(c, "copies"),
            number(c, "launch_calls"), number(c, "syncs"));
    if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "gpu_records")))
        fprintf(out, "  %-12s none: a CPU-only trace, or the GPU part is missing\n", "");
    fprintf(out, "  %-12s ranges %.0f (ProfilerStep %.0f), threads %.0f\n", "host records",
            number(c, "ranges"), number(c, "profiler_steps"), number(c, "threads"));
    double f0 = number(o, "first_ns"), f1 = number(o, "last_ns");
    if (f0 > 0 && f1 > f0)
        fprintf(out, "  %-12s %.3f s\n", "span", (f1 - f0) / 1e9);
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "clean_end")))
        fprintf(out, "  %-12s parsed to the end\n", "closed");
    else
        fprintf(out, "  %-12s cut short: the records after the problem below are missing\n",
                "closed");
    const cJSON *probs = cJSON_GetObjectItemCaseSensitive(o, "problems");
    if (!cJSON_GetArraySize(probs)) {
        fprintf(out, "  %-12s none\n", "problems");
        return;
    }
    fprintf(out, "  %-12s\n", "problems");
    const cJSON *p;
    cJSON_ArrayForEach(p, probs)
        fprintf(out, "    %s\n", p->valuestring);
}

static int add_path(cJSON *files, const char *path, size_t *n_files, size_t *n_problems)
{
    struct stat st;
    if (!stat(path, &st) && S_ISDIR(st.st_mode)) {
        char **paths;
        size_t n;
        if (tsa_kineto_list(path, &paths, &n))
            return -1;
        for (size_t i = 0; i < n; i++) {
            add_path(files, paths[i], n_files, n_problems);
            free(paths[i]);
        }
        free(paths);
        return 0;
    }
    int problem;
    cJSON_AddItemToArray(files, describe(path, &problem));
    (*n_files)++;
    *n_problems += problem;
    return 0;
}

int tsa_cmd_info_any(int argc, char **argv)
{
    int json = 0, paths = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) {
            json = 1;
            continue;
        }
        if (argv[i][0] == '-' || !is_kineto_path(argv[i]))
            return tsa_cmd_info(argc, argv); /* dumps, usage, help */
        paths++;
    }
    if (!paths)
        return tsa_cmd_info(argc, argv);
    cJSON *root = cJSON_CreateObject();
    cJSON *files = cJSON_AddArrayToObject(root, "files");
    size_t n_files = 0, n_problems = 0;
    int unreadable = 0;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--json") && add_path(files, argv[i], &n_files, &n_problems)) {
            fprintf(stderr, "tscope-report info: %s: cannot read\n", argv[i]);
            unreadable = 1;
        }
    int rc = !n_files ? 2 : (n_problems || unreadable) ? 1 : 0;
    cJSON_AddNumberToObject(root, "exit_status", rc);
    tsr_cli_print_files(root, json, print_text);
    cJSON_Delete(root);
    return rc;
}
