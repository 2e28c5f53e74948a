/* Shared by the black-box end-to-end tests: see tb_blackbox.h. */
#include "tb_blackbox.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "reader/dump_reader.h"
#include "tb_harness.h"

void tbb_put_trigger(const char *out, const char *name, const char *text, char *path,
                     size_t cap)
{
    snprintf(path, cap, "%s/triggers", out);
    assert_true(mkdir(path, 0777) == 0 || errno == EEXIST);
    snprintf(path, cap, "%s/triggers/%s", out, name);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    assert_true(fputs(text, fp) >= 0);
    assert_int_equal(fclose(fp), 0);
}

/* Names of the capture-* folders of dir, sorted, newline-joined. */
char *tbb_windows(const char *dir, int *n)
{
    char *out = calloc(1, 65536);
    *n = 0;
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    char names[64][256];
    while ((e = readdir(d)) && *n < 64)
        if (!strncmp(e->d_name, "capture-", 8))
            snprintf(names[(*n)++], sizeof names[0], "%s", e->d_name);
    closedir(d);
    qsort(names, (size_t)*n, sizeof names[0], (int (*)(const void *, const void *))strcmp);
    for (int i = 0; i < *n; i++)
        snprintf(out + strlen(out), 65536 - strlen(out), "%s\n", names[i]);
    return out;
}

/* One window folder: 4 dumps, each saying the same capture_steps (returned,
 * "A-B"), and the same NCCL sequence numbers from every rank (the same
 * steps, matched by NCCL, not clocks). */
void tbb_expect_same_steps(const char *win_dir, char *steps, size_t cap)
{
    assert_int_equal(tb_count_dumps(win_dir), 4);
    int st;
    cJSON *lines = tb_dump_json(win_dir, &st);
    assert_non_null(lines);
    char per_rank[4][64] = {"", "", "", ""};
    long long lo[4], hi[4];
    for (int r = 0; r < 4; r++)
        lo[r] = -1, hi[r] = -1;
    cJSON *l;
    cJSON_ArrayForEach(l, lines)
    {
        int r = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(l, "rank"));
        const char *kind = cJSON_GetStringValue(cJSON_GetObjectItem(l, "kind"));
        if (r < 0 || r > 3 || !kind)
            continue;
        const char *key = cJSON_GetStringValue(cJSON_GetObjectItem(l, "key"));
        if (!strcmp(kind, "meta") && key && !strcmp(key, "capture_steps"))
            snprintf(per_rank[r], sizeof per_rank[r], "%s",
                     cJSON_GetStringValue(cJSON_GetObjectItem(l, "value")));
        const char *op = cJSON_GetStringValue(cJSON_GetObjectItem(l, "op"));
        if (!strcmp(kind, "nccl") && op && !strcmp(op, "AllReduce")) {
            long long q = (long long)cJSON_GetNumberValue(cJSON_GetObjectItem(l, "seq"));
            lo[r] = lo[r] < 0 || q < lo[r] ? q : lo[r];
            hi[r] = q > hi[r] ? q : hi[r];
        }
    }
    cJSON_Delete(lines);
    for (int r = 0; r < 4; r++) {
        if (strcmp(per_rank[r], per_rank[0]) || !per_rank[r][0])
            fail_msg("%s: rank %d has steps '%s', rank 0 '%s'", win_dir, r, per_rank[r],
                     per_rank[0]);
        if (lo[r] < 0 || lo[r] != lo[0] || hi[r] != hi[0])
            fail_msg("%s: rank %d has AllReduce seq %lld-%lld, rank 0 %lld-%lld", win_dir, r,
                     lo[r], hi[r], lo[0], hi[0]);
    }
    snprintf(steps, cap, "%s", per_rank[0]);
}

/* `tscope-report blackbox DIR [more]`: stdout, status checked to be 0. */
char *tbb_report(const char *dir, const char *more1, const char *more2)
{
    const char *argv[] = {tb_tool("REPORT"), "blackbox", dir, more1, more2, NULL};
    tb_result r;
    assert_int_equal(tb_run(argv, NULL, 60, &r), 0);
    if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 0)
        fail_msg("tscope-report blackbox %s: status 0x%x\n%.2000s", dir, r.status, r.err);
    char *out = strdup(r.out);
    tb_result_free(&r);
    return out;
}

/* Every rank summarized steps 0..n-1, at most 1 KiB per step on disk. */
void tbb_expect_summaries(const char *dir, int n)
{
    char *out = tbb_report(dir, NULL, NULL);
    char want[64];
    snprintf(want, sizeof want, "4 ranks, steps 0-%d summarized", n - 1);
    if (!strstr(out, want))
        fail_msg("want '%s' in:\n%.3000s", want, out);
    const char *p = strstr(out, "RANKS\n");
    assert_non_null(p);
    p = strchr(p + 6, '\n'); /* the heading line */
    for (int r = 0; r < 4; r++) {
        int rank, steps;
        double per_step;
        assert_int_equal(sscanf(p + 1, "%d %d %lf", &rank, &steps, &per_step), 3);
        assert_int_equal(steps, n);
        if (per_step > 1024)
            fail_msg("rank %d writes %.1f bytes per step (limit 1024)", rank, per_step);
        p = strchr(p + 1, '\n');
    }
    free(out);
}


typedef struct steps_ctx {
    tbb_rank_steps *r;
} steps_ctx;

static void on_meta(void *ctx, const tsr_file *f, const char *key, const char *value, int end)
{
    (void)f;
    (void)end;
    if (!strcmp(key, TSC_META_RANK))
        ((steps_ctx *)ctx)->r->rank = atoi(value);
}

static void on_steps(void *ctx, const tsr_file *f, const tsc_step_summary *s,
                     const tsc_step_extra *x, size_t n)
{
    (void)f;
    tbb_rank_steps *r = ((steps_ctx *)ctx)->r;
    if (r->n + n > r->cap) {
        r->cap = (r->n + n) * 2;
        r->s = realloc(r->s, r->cap * sizeof *r->s);
        r->x = realloc(r->x, r->cap * sizeof *r->x);
        assert_non_null(r->s);
        assert_non_null(r->x);
    }
    memcpy(r->s + r->n, s, n * sizeof *s);
    memcpy(r->x + r->n, x, n * sizeof *x);
    r->n += n;
}

static int by_rank(const void *a, const void *b)
{
    return ((const tbb_rank_steps *)a)->rank - ((const tbb_rank_steps *)b)->rank;
}

size_t tbb_load_steps(const char *dir, tbb_rank_steps *out, size_t max)
{
    char **paths = NULL;
    size_t n = 0, k = 0;
    assert_int_equal(tsr_list_dumps(dir, &paths, &n), 0);
    for (size_t i = 0; i < n && k < max; i++) {
        memset(&out[k], 0, sizeof out[k]);
        steps_ctx c = {.r = &out[k]};
        tsr_callbacks cb = {.on_meta = on_meta, .on_steps = on_steps};
        tsr_stats st;
        tsr_read_file(paths[i], &cb, &c, &st);
        out[k].orphan_extras = st.step_extras_orphaned;
        k++;
    }
    tsr_free_paths(paths, n);
    qsort(out, k, sizeof *out, by_rank);
    return k;
}

void tbb_free_steps(tbb_rank_steps *r, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(r[i].s);
        free(r[i].x);
    }
}

double tbb_prom(const char *text, const char *name, const char *label)
{
    size_t len = strlen(name);
    for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        if (strncmp(l, name, len) || l[len] != '{')
            continue;
        const char *close = strchr(l, '}'), *eol = strchr(l, '\n');
        if (!close || (eol && close > eol))
            continue;
        if (label) {
            char *lab = strndup(l, (size_t)(close - l));
            int has = strstr(lab, label) != NULL;
            free(lab);
            if (!has)
                continue;
        }
        return strtod(close + 1, NULL);
    }
    return NAN;
}
