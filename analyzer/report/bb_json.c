/* JSON view of a black-box folder (`tscope-report blackbox DIR --json`):
 * the text view's content with exact integers (docs/blackbox.md, "JSON"). */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>

#include "bb_text.h"
#include "util/json_int.h"

static cJSON *ranks_json(const tsa_bb_folder *f)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t r = 0; a && r < f->n_ranks; r++) {
        const tsa_bb_rank *k = &f->ranks[r];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToArray(a, o);
        cJSON_AddNumberToObject(o, "rank", k->rank);
        cJSON_AddStringToObject(o, "path", k->path);
        tsa_json_add_u64(o, "steps", k->n_steps);
        tsa_json_add_u64(o, "file_bytes", k->file_bytes);
        tsa_json_add_num(o, "bytes_per_step",
                         k->n_steps ? (double)k->file_bytes / (double)k->n_steps : 0.0);
    }
    return a;
}

/* A row's data stall and MFU estimate: null when not recorded in it (no
 * CUPTI copy records; no cuBLAS GEMM records or no known peak), never 0. */
static void extras_json(cJSON *o, const tsa_bb_row *row)
{
    tsa_json_add_u64(o, "stall_rank_steps", row->stall_rank_steps);
    if (row->stall_rank_steps) {
        tsa_json_add_u64(o, "data_stall_ns", row->stall_ns);
        tsa_json_add_u64(o, "max_data_stall_ns", row->max_stall_ns);
        cJSON_AddNumberToObject(o, "max_data_stall_rank", row->max_stall_rank);
        tsa_json_add_u64(o, "max_data_stall_step", row->max_stall_step);
    } else {
        cJSON_AddNullToObject(o, "data_stall_ns");
        cJSON_AddNullToObject(o, "max_data_stall_ns");
        cJSON_AddNullToObject(o, "max_data_stall_rank");
        cJSON_AddNullToObject(o, "max_data_stall_step");
    }
    tsa_json_add_u64(o, "mfu_rank_steps", row->mfu_rank_steps);
    if (row->mfu_rank_steps) {
        tsa_json_add_u64(o, "gemm_peak_ns", row->gemm_peak_ns);
        tsa_json_add_u64(o, "mfu_step_ns", row->mfu_step_ns);
    } else {
        cJSON_AddNullToObject(o, "gemm_peak_ns");
        cJSON_AddNullToObject(o, "mfu_step_ns");
    }
    tsa_json_add_num(o, "mfu", row->mfu_rank_steps && row->mfu_step_ns
                                   ? (double)row->gemm_peak_ns / (double)row->mfu_step_ns
                                   : NAN);
}

static cJSON *rows_json(const tsa_bb_folder *f, const tsa_bb_timeline *t)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; a && i < t->n_rows; i++) {
        const tsa_bb_row *row = &t->rows[i];
        cJSON *o = cJSON_CreateObject(), *ids = cJSON_CreateArray();
        cJSON_AddItemToArray(a, o);
        tsa_json_add_u64(o, "first", row->first);
        tsa_json_add_u64(o, "last", row->last);
        tsa_json_add_u64(o, "steps", row->steps);
        tsa_json_add_u64(o, "median_step_ns", row->median_ns);
        tsa_json_add_u64(o, "max_step_ns", row->max_ns);
        tsa_json_add_u64(o, "nccl_ns", row->nccl_ns);
        tsa_json_add_u64(o, "rank_steps", row->rank_steps);
        tsa_json_add_u64(o, "slow_steps", row->slow);
        extras_json(o, row);
        for (size_t w = 0; w < f->n_windows; w++)
            if (tsa_bb_window_overlaps(&f->windows[w], row->first, row->last))
                cJSON_AddItemToArray(ids, cJSON_CreateString(f->windows[w].id));
        cJSON_AddItemToObject(o, "windows", ids);
    }
    return a;
}

static cJSON *windows_json(const tsa_bb_folder *f)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; a && i < f->n_windows; i++) {
        const tsa_bb_window *w = &f->windows[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToArray(a, o);
        cJSON_AddStringToObject(o, "id", w->id);
        cJSON_AddStringToObject(o, "reason", w->reason);
        cJSON_AddStringToObject(o, "steps", w->steps);
        if (w->has_range) {
            tsa_json_add_u64(o, "first", w->first);
            tsa_json_add_u64(o, "last", w->last);
        }
        tsa_json_add_u64(o, "ranks", w->n_dumps);
        tsa_json_add_u64(o, "bytes", w->bytes);
        cJSON_AddStringToObject(o, "note", w->note);
    }
    return a;
}

/* One warning, when its count is not 0: {kind, <count_key>: count, message}. */
static void add_warning(cJSON *a, const char *kind, const char *count_key, uint64_t count,
                        const char *message)
{
    if (!a || !count)
        return;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToArray(a, o);
    cJSON_AddStringToObject(o, "kind", kind);
    tsa_json_add_u64(o, count_key, count);
    cJSON_AddStringToObject(o, "message", message);
}

static cJSON *warnings_json(const tsa_bb_folder *f, const tsa_bb_timeline *t)
{
    cJSON *a = cJSON_CreateArray();
    add_warning(a, "step_mismatch", "steps", t->mismatched,
                "steps end with NCCL calls of different sequence numbers on different ranks: "
                "the ranks do not agree on the step boundaries");
    add_warning(a, "extra_without_summary", "records", f->orphan_extras,
                "step extra records whose step summary is not in the file (its chunk was "
                "lost); ignored");
    add_warning(a, "unreadable", "files", f->problems,
                "files with problems (said on stderr); the rest was read");
    return a;
}

int tsa_bb_print_json(FILE *out, const char *dir, const tsa_bb_folder *f,
                      const tsa_bb_timeline *t)
{
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return -1;
    cJSON_AddStringToObject(root, "dir", dir);
    tsa_json_add_u64(root, "steps", t->n_steps);
    tsa_json_add_u64(root, "slow_steps", t->slow);
    cJSON_AddItemToObject(root, "ranks", ranks_json(f));
    cJSON_AddItemToObject(root, "timeline", rows_json(f, t));
    cJSON_AddItemToObject(root, "windows", windows_json(f));
    cJSON_AddItemToObject(root, "warnings", warnings_json(f, t));
    char *s = cJSON_Print(root);
    cJSON_Delete(root);
    if (!s)
        return -1;
    fputs(s, out);
    fputc('\n', out);
    free(s);
    return 0;
}
