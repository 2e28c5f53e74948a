/* Finding job directories under the batch's roots. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "batch.h"
#include "load/kineto_load.h"
#include "util/vec.h"
#include "util/cmp.h"

#define MAX_DEPTH 32

typedef struct found {
    char **v;
    size_t n, cap;
} found;

/* What the directory holds directly: dumps, JSON files (maybe traces). */
static void scan(const char *dir, int *dumps, int *jsons)
{
    *dumps = *jsons = 0;
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        if (tsa_ends_with(e->d_name, ".tsd"))
            *dumps = 1;
        else if (tsa_ends_with(e->d_name, ".json") || tsa_ends_with(e->d_name, ".json.gz"))
            *jsons = 1;
    }
    closedir(d);
}

static int walk(const char *dir, int depth, found *f)
{
    int dumps, jsons;
    scan(dir, &dumps, &jsons);
    if (dumps || (jsons && tsa_kineto_dir(dir) > 0)) {
        char *p = strdup(dir);
        if (!p || TSA_VEC_PUSH(f->v, f->n, f->cap, p)) {
            free(p);
            return -1;
        }
        return 0;   /* a job's subdirectories belong to the job */
    }
    if (depth >= MAX_DEPTH)
        return 0;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *e;
    int rc = 0;
    while (!rc && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char *p;
        if (asprintf(&p, "%s%s%s", dir, tsa_ends_with(dir, "/") ? "" : "/", e->d_name) < 0) {
            rc = -1;
            break;
        }
        struct stat st;
        /* lstat: symlinked directories are not followed, so no loops */
        if (!lstat(p, &st) && S_ISDIR(st.st_mode))
            rc = walk(p, depth + 1, f);
        free(p);
    }
    closedir(d);
    return rc;
}

/* A found job: its path as spelled from the root, and its canonical
 * path, which decides whether two spellings (base, base/, ./base, a
 * symlink) are the same job. */
typedef struct spelled {
    char *shown, *real;
} spelled;

static int cmp_real(const void *a, const void *b)
{
    const spelled *x = a, *y = b;
    int c = strcmp(x->real, y->real);
    return c ? c : strcmp(x->shown, y->shown);
}

/* Trailing slashes off (but "/" stays): "base/" is shown as "base". */
static void trim_slashes(char *p)
{
    size_t n = strlen(p);
    while (n > 1 && p[n - 1] == '/')
        p[--n] = '\0';
}

/* One row per real directory, the first spelling kept; f->v is
 * replaced by the kept spellings, sorted. */
static int dedupe_by_realpath(found *f, size_t *kept)
{
    spelled *s = calloc(f->n ? f->n : 1, sizeof *s);
    if (!s)
        return -1;
    for (size_t k = 0; k < f->n; k++) {
        trim_slashes(f->v[k]);
        s[k].shown = f->v[k];
        s[k].real = realpath(f->v[k], NULL);
        if (!s[k].real)
            s[k].real = strdup(f->v[k]);
        if (!s[k].real) {
            for (size_t j = 0; j < k; j++)
                free(s[j].real);
            free(s);
            return -1;
        }
    }
    if (f->n > 1)
        qsort(s, f->n, sizeof *s, cmp_real);
    size_t keep = 0;
    for (size_t k = 0; k < f->n; k++) {
        if (keep && !strcmp(s[keep - 1].real, s[k].real)) {
            free(s[k].shown);
            free(s[k].real);
            continue;
        }
        s[keep++] = s[k];
    }
    for (size_t k = 0; k < keep; k++) {
        f->v[k] = s[k].shown;
        free(s[k].real);
    }
    free(s);
    if (keep > 1)
        qsort(f->v, keep, sizeof *f->v, tsa_cmp_str);
    *kept = keep;
    return 0;
}

int tsa_batch_find_jobs(char *const *roots, size_t n_roots, char ***jobs, size_t *n_jobs)
{
    found f = {0};
    for (size_t i = 0; i < n_roots; i++) {
        struct stat st;
        if (stat(roots[i], &st) || !S_ISDIR(st.st_mode)) {
            fprintf(stderr, "tscope-report: batch: %s: %s\n", roots[i],
                    errno ? strerror(errno) : "not a directory");
            errno = 0;
            continue;
        }
        if (walk(roots[i], 0, &f)) {
            for (size_t k = 0; k < f.n; k++)
                free(f.v[k]);
            free(f.v);
            return -1;
        }
    }
    /* the same directory given twice, under other spellings, or through
     * nested roots is one job */
    size_t keep = 0;
    if (dedupe_by_realpath(&f, &keep)) {
        for (size_t k = 0; k < f.n; k++)
            free(f.v[k]);
        free(f.v);
        return -1;
    }
    *jobs = f.v;
    *n_jobs = keep;
    return 0;
}
