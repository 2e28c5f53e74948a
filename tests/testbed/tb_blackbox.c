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

/* One rank's AllReduce calls in a window: the seqs of those that returned,
 * and of those in flight when the window was cut (an ENTER record). */
typedef struct window_calls {
    long long seq[1024];
    int in_flight[1024];
    int n;
    long long lo, done_hi;   /* lowest of all, highest returned; -1: none */
} window_calls;

static int has_seq(const window_calls *w, long long q)
{
    for (int i = 0; i < w->n; i++)
        if (w->seq[i] == q)
            return 1;
    return 0;
}

static void calls_text(const window_calls *w, char *buf, size_t cap)
{
    int n = snprintf(buf, cap, "returned %lld-%lld, in flight:", w->lo, w->done_hi);
    for (int i = 0; i < w->n && n > 0 && (size_t)n < cap; i++)
        if (w->in_flight[i])
            n += snprintf(buf + n, cap - (size_t)n, " %lld", w->seq[i]);
}

/* One window folder: 4 dumps, each saying the same capture_steps (returned,
 * "A-B"), and the same NCCL calls from every rank (the same steps, matched
 * by NCCL, not clocks).  A rank still inside a call when the window was
 * cut has that call in flight: every call some rank returned from is on
 * every rank, returned or in flight, and beyond them a rank holds at most
 * the next call, in flight. */
void tbb_expect_same_steps(const char *win_dir, char *steps, size_t cap)
{
    assert_int_equal(tb_count_dumps(win_dir), 4);
    int st;
    cJSON *lines = tb_dump_json(win_dir, &st);
    assert_non_null(lines);
    char per_rank[4][64] = {"", "", "", ""};
    static window_calls w[4];
    for (int r = 0; r < 4; r++)
        w[r].n = 0, w[r].lo = w[r].done_hi = -1;
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
        int done = !strcmp(kind, "nccl"), entered = !strcmp(kind, "nccl_enter");
        if ((done || entered) && op && !strcmp(op, "AllReduce") && w[r].n < 1024) {
            long long q = (long long)cJSON_GetNumberValue(cJSON_GetObjectItem(l, "seq"));
            w[r].seq[w[r].n] = q;
            w[r].in_flight[w[r].n++] = entered;
            w[r].lo = w[r].lo < 0 || q < w[r].lo ? q : w[r].lo;
            if (done && q > w[r].done_hi)
                w[r].done_hi = q;
        }
    }
    cJSON_Delete(lines);
    long long hi = -1;
    for (int r = 0; r < 4; r++)
        hi = w[r].done_hi > hi ? w[r].done_hi : hi;
    for (int r = 0; r < 4; r++) {
        if (strcmp(per_rank[r], per_rank[0]) || !per_rank[r][0])
            fail_msg("%s: rank %d has steps '%s', rank 0 '%s'", win_dir, r, per_rank[r],
                     per_rank[0]);
        char mine[512], first[512];
        calls_text(&w[r], mine, sizeof mine);
        calls_text(&w[0], first, sizeof first);
        if (w[r].done_hi < 0 || w[r].lo != w[0].lo)
            fail_msg("%s: rank %d's AllReduce calls: %s; rank 0's: %s", win_dir, r, mine, first);
        for (long long q = w[r].lo; q <= hi; q++)
            if (!has_seq(&w[r], q))
                fail_msg("%s: rank %d lacks AllReduce seq %lld (%s), which a rank returned "
                         "from; rank 0's: %s", win_dir, r, q, mine, first);
        int beyond = 0;
        for (int i = 0; i < w[r].n; i++)
            beyond += w[r].seq[i] > hi;
        if (beyond > 1 || (beyond && !has_seq(&w[r], hi + 1)))
            fail_msg("%s: rank %d holds calls beyond seq %lld other than the next one in "
                     "flight: %s", win_dir, r, hi, mine);
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
