/* Loading a black-box folder: see bb_load.h. */
#include "bb_load.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reader/dump_reader.h"

int tsa_bb_is_folder(const char *dir)
{
    char **paths = NULL;
    size_t n = 0;
    if (tsr_list_dumps(dir, &paths, &n) < 0 || n == 0) {
        tsr_free_paths(paths, n);
        return 0;
    }
    char buf[65536];
    int fd = open(paths[0], O_RDONLY | O_CLOEXEC);
    ssize_t got = fd < 0 ? -1 : read(fd, buf, sizeof buf);
    if (fd >= 0)
        close(fd);
    tsr_free_paths(paths, n);
    static const char pair[] = TSC_META_MODE "\0blackbox";
    return got > 0 && memmem(buf, (size_t)got, pair, sizeof pair) != NULL;
}

typedef struct load_ctx {
    tsa_bb_rank *r;
    tsa_bb_window *w;
    int oom;
} load_ctx;

static void on_steps(void *ctx, const tsr_file *f, const tsc_step_summary *s,
                     const tsc_step_extra *x, size_t n)
{
    (void)f;
    load_ctx *c = ctx;
    tsa_bb_rank *r = c->r;
    if (c->oom)
        return;
    if (r->n_steps + n > r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 1024;
        while (cap < r->n_steps + n)
            cap *= 2;
        tsc_step_summary *p = realloc(r->steps, cap * sizeof *p);
        if (p)
            r->steps = p;
        tsc_step_extra *q = p ? realloc(r->extras, cap * sizeof *q) : NULL;
        if (q)
            r->extras = q;
        if (!p || !q) {
            c->oom = 1;
            return;
        }
        r->cap = cap;
    }
    memcpy(r->steps + r->n_steps, s, n * sizeof *s);
    memcpy(r->extras + r->n_steps, x, n * sizeof *x);
    r->n_steps += n;
}

static void set_str(char **dst, const char *v)
{
    free(*dst);
    *dst = strdup(v);
}

static void on_meta(void *ctx, const tsr_file *f, const char *key, const char *value, int end)
{
    (void)f;
    (void)end;
    load_ctx *c = ctx;
    if (c->r && !strcmp(key, TSC_META_RANK)) {
        char *e;
        long v = strtol(value, &e, 10);
        c->r->rank = *e || v < -1 || v > 100000000 ? -1 : (int)v;
    }
    if (!c->w)
        return;
    if (!strcmp(key, TSC_META_CAPTURE_STEPS))
        set_str(&c->w->steps, value);
    else if (!strcmp(key, TSC_META_CAPTURE_REASON))
        set_str(&c->w->reason, value);
    else if (!strcmp(key, TSC_META_CAPTURE_NOTE))
        set_str(&c->w->note, value);
}

static void on_problem(void *ctx, const char *path, uint64_t off, const char *msg)
{
    (void)ctx;
    fprintf(stderr, "tscope-report: %s: offset %llu: %s\n", path, (unsigned long long)off, msg);
}

static int by_rank(const void *a, const void *b)
{
    const tsa_bb_rank *x = a, *y = b;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/* Windows in step order (then by id): the order they happened in. */
static int by_id(const void *a, const void *b)
{
    const tsa_bb_window *x = a, *y = b;
    uint64_t sx = x->has_range ? x->first : UINT64_MAX, sy = y->has_range ? y->first : UINT64_MAX;
    return sx != sy ? (sx > sy) - (sx < sy) : strcmp(x->id, y->id);
}

/* "A-B" (decimal, A <= B) into w's range. */
static void parse_range(tsa_bb_window *w)
{
    char *e1, *e2;
    if (!w->steps[0] || w->steps[0] < '0' || w->steps[0] > '9')
        return;
    unsigned long long a = strtoull(w->steps, &e1, 10);
    if (*e1 != '-' || e1[1] < '0' || e1[1] > '9')
        return;
    unsigned long long b = strtoull(e1 + 1, &e2, 10);
    if (*e2 || b < a)
        return;
    w->has_range = 1;
    w->first = a;
    w->last = b;
}

static uint64_t file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* One capture-<id> folder: its dumps, and the first one's capture META. */
static int load_window(tsa_bb_folder *out, const char *dir, const char *name)
{
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    char **paths = NULL;
    size_t n = 0;
    if (tsr_list_dumps(path, &paths, &n) < 0 || n == 0) {
        tsr_free_paths(paths, n);
        return 0; /* emptied by retention */
    }
    tsa_bb_window *nw = realloc(out->windows, (out->n_windows + 1) * sizeof *nw);
    if (!nw) {
        tsr_free_paths(paths, n);
        return -1;
    }
    out->windows = nw;
    tsa_bb_window *w = &nw[out->n_windows++];
    memset(w, 0, sizeof *w);
    w->id = strdup(name + strlen("capture-"));
    w->n_dumps = n;
    for (size_t i = 0; i < n; i++)
        w->bytes += file_size(paths[i]);
    load_ctx c = {.w = w};
    tsr_callbacks cb = {.on_meta = on_meta, .on_problem = on_problem};
    if (tsr_read_file(paths[0], &cb, &c, NULL) != TSR_OK)
        out->problems++;
    tsr_free_paths(paths, n);
    if (!w->steps)
        w->steps = strdup("");
    if (!w->reason)
        w->reason = strdup("");
    if (!w->note)
        w->note = strdup("");
    if (!w->id || !w->steps || !w->reason || !w->note)
        return -1;
    parse_range(w);
    return 0;
}

static int load_windows(tsa_bb_folder *out, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *e;
    int rc = 0;
    while (!rc && (e = readdir(d)))
        if (!strncmp(e->d_name, "capture-", 8) && e->d_name[8])
            rc = load_window(out, dir, e->d_name);
    closedir(d);
    if (out->n_windows)
        qsort(out->windows, out->n_windows, sizeof *out->windows, by_id);
    return rc;
}

int tsa_bb_load(const char *dir, tsa_bb_folder *out, char *err, size_t cap)
{
    memset(out, 0, sizeof *out);
    char **paths = NULL;
    size_t n = 0;
    int rc = tsr_list_dumps(dir, &paths, &n);
    if (rc < 0 || n == 0) {
        snprintf(err, cap, "%s: %s", dir, rc < 0 ? strerror(-rc) : "no tscope dumps (*.tsd)");
        tsr_free_paths(paths, n);
        return -1;
    }
    out->ranks = calloc(n, sizeof *out->ranks);
    if (!out->ranks) {
        tsr_free_paths(paths, n);
        snprintf(err, cap, "out of memory");
        return -1;
    }
    int oom = 0;
    for (size_t i = 0; i < n && !oom; i++) {
        tsa_bb_rank *r = &out->ranks[out->n_ranks++];
        r->rank = -1;
        r->path = strdup(paths[i]);
        r->file_bytes = file_size(paths[i]);
        load_ctx c = {.r = r};
        tsr_callbacks cb = {.on_meta = on_meta, .on_steps = on_steps, .on_problem = on_problem};
        tsr_stats st;
        if (tsr_read_file(paths[i], &cb, &c, &st) != TSR_OK)
            out->problems++;
        r->orphan_extras = st.step_extras_orphaned;
        out->orphan_extras += st.step_extras_orphaned;
        oom = c.oom || !r->path;
    }
    tsr_free_paths(paths, n);
    qsort(out->ranks, out->n_ranks, sizeof *out->ranks, by_rank);
    if (oom || load_windows(out, dir) < 0) {
        tsa_bb_free(out);
        snprintf(err, cap, "out of memory");
        return -1;
    }
    return 0;
}

void tsa_bb_free(tsa_bb_folder *f)
{
    for (size_t i = 0; i < f->n_ranks; i++) {
        free(f->ranks[i].path);
        free(f->ranks[i].steps);
        free(f->ranks[i].extras);
    }
    for (size_t i = 0; i < f->n_windows; i++) {
        free(f->windows[i].id);
        free(f->windows[i].steps);
        free(f->windows[i].reason);
        free(f->windows[i].note);
    }
    free(f->ranks);
    free(f->windows);
    memset(f, 0, sizeof *f);
}
