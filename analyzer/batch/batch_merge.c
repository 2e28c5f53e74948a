/* `batch merge FILE...`: the job rows of shard outputs, back into one
 * batch.  Only job rows are kept: every other row type is a view derived
 * from all job rows (the fleet view), which one shard cannot compute, so
 * the caller recomputes it from the merged rows. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"

/* A job row is well under 64 KiB; a longer line is not ours. */
#define MAX_LINE (1u << 20)

typedef struct merged {
    tsa_batch_row *rows;
    size_t *from;   /* input file of each row, for the duplicate message */
    size_t n, cap;
} merged;

static int push_row(merged *m, const tsa_batch_row *r, size_t file)
{
    if (m->n == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 64;
        tsa_batch_row *rows = realloc(m->rows, cap * sizeof *rows);
        if (rows)
            m->rows = rows;
        size_t *from = realloc(m->from, cap * sizeof *from);
        if (from)
            m->from = from;
        if (!rows || !from)
            return -1;
        m->cap = cap;
    }
    m->from[m->n] = file;
    m->rows[m->n++] = *r;
    return 0;
}

/* One line: 0 (kept or skipped), -1 with err filled. */
static int take_line(merged *m, const char *line, size_t file, const char *name, size_t lineno,
                     char *err, size_t cap)
{
    cJSON *o = cJSON_Parse(line);
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(o, "type");
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(o, "schema_version");
    const cJSON *job = cJSON_GetObjectItemCaseSensitive(o, "job");
    int rc = -1;
    if (!cJSON_IsObject(o) || !cJSON_IsString(type) || !cJSON_IsNumber(ver))
        snprintf(err, cap, "%s:%zu: not a batch --ndjson row (a JSON object with \"type\" and "
                 "\"schema_version\")", name, lineno);
    else if (ver->valuedouble != TSA_BATCH_NDJSON_SCHEMA)
        snprintf(err, cap, "%s:%zu: schema_version %g, this tscope reads %d: re-run the shard "
                 "with this version", name, lineno, ver->valuedouble, TSA_BATCH_NDJSON_SCHEMA);
    else if (strcmp(type->valuestring, "job"))
        rc = 0;   /* a derived row: recomputed from the job rows */
    else if (!cJSON_IsString(job))
        snprintf(err, cap, "%s:%zu: job row without a \"job\" string", name, lineno);
    else {
        tsa_batch_row r;
        if (tsa_batch_row_from_json(o, job->valuestring, &r))
            snprintf(err, cap, "%s:%zu: job row without a \"status\" string", name, lineno);
        else if (push_row(m, &r, file))
            snprintf(err, cap, "out of memory");
        else
            rc = 0;
        if (rc)
            tsa_batch_row_free(&r);
    }
    cJSON_Delete(o);
    return rc;
}

static int read_file(merged *m, const char *name, size_t file, char *err, size_t cap)
{
    FILE *f = strcmp(name, "-") ? fopen(name, "r") : stdin;
    if (!f) {
        snprintf(err, cap, "%s: %s", name, strerror(errno));
        return -1;
    }
    char *line = NULL;
    size_t lcap = 0, lineno = 0;
    ssize_t len;
    int rc = 0;
    while (!rc && (len = getline(&line, &lcap, f)) >= 0) {
        lineno++;
        if ((size_t)len > MAX_LINE) {
            snprintf(err, cap, "%s:%zu: line longer than %u bytes", name, lineno, MAX_LINE);
            rc = -1;
        } else if (strspn(line, " \t\r\n") < (size_t)len)
            rc = take_line(m, line, file, name, lineno, err, cap);
    }
    if (!rc && ferror(f)) {
        snprintf(err, cap, "%s: read error", name);
        rc = -1;
    }
    free(line);
    if (f != stdin)
        fclose(f);
    return rc;
}

static const merged *g_sort;
static int cmp_job(const void *pa, const void *pb)
{
    size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
    return strcmp(g_sort->rows[a].job, g_sort->rows[b].job);
}

/* Rows in job order (as an unsharded batch prints them), each job once. */
static int sort_unique(merged *m, char *const *files, tsa_batch_row **out, char *err, size_t cap)
{
    size_t *idx = malloc((m->n ? m->n : 1) * sizeof *idx);
    tsa_batch_row *sorted = malloc((m->n ? m->n : 1) * sizeof *sorted);
    if (!idx || !sorted) {
        free(idx);
        free(sorted);
        snprintf(err, cap, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < m->n; i++)
        idx[i] = i;
    g_sort = m;
    qsort(idx, m->n, sizeof *idx, cmp_job);
    for (size_t i = 1; i < m->n; i++)
        if (!strcmp(m->rows[idx[i]].job, m->rows[idx[i - 1]].job)) {
            /* shards are disjoint: a job twice means overlapping inputs */
            snprintf(err, cap, "job %s is in %s and in %s: merge each shard's output once",
                     m->rows[idx[i]].job, files[m->from[idx[i - 1]]], files[m->from[idx[i]]]);
            free(idx);
            free(sorted);
            return -1;
        }
    for (size_t i = 0; i < m->n; i++)
        sorted[i] = m->rows[idx[i]];
    free(idx);
    *out = sorted;
    return 0;
}

int tsa_batch_merge_read(char *const *files, size_t n_files, tsa_batch_row **rows, size_t *n,
                         char *err, size_t cap)
{
    merged m = {0};
    int rc = 0;
    for (size_t i = 0; i < n_files && !rc; i++)
        rc = read_file(&m, files[i], i, err, cap);
    if (!rc)
        rc = sort_unique(&m, files, rows, err, cap);
    if (rc)
        for (size_t i = 0; i < m.n; i++)
            tsa_batch_row_free(&m.rows[i]);
    else
        *n = m.n;
    free(m.rows);
    free(m.from);
    return rc;
}
