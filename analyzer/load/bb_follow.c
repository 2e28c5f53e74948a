/* Following a running black-box job: see bb_follow.h. */
#include "bb_follow.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int tsa_bb_follow_init(tsa_bb_follow *fw, const char *dir)
{
    memset(fw, 0, sizeof *fw);
    fw->dir = strdup(dir);
    return fw->dir ? 0 : -1;
}

void tsa_bb_follow_free(tsa_bb_follow *fw)
{
    for (size_t i = 0; i < fw->n; i++) {
        tsr_close(fw->src[i].f);
        free(fw->src[i].path);
    }
    free(fw->src);
    free(fw->dir);
    memset(fw, 0, sizeof *fw);
}

/* s is the newest black-box file of its rank?  Makes it the active one;
 * a file it replaces that was already handed over means a restart. */
static void elect(tsa_bb_follow *fw, tsa_bb_source *s)
{
    for (size_t i = 0; i < fw->n; i++) {
        tsa_bb_source *o = &fw->src[i];
        if (o == s || !o->active || o->rank != s->rank)
            continue;
        if (o->created_ns > s->created_ns ||
            (o->created_ns == s->created_ns && strcmp(o->path, s->path) > 0))
            return; /* o stays */
        o->active = 0;
        fw->restart |= o->delivered;
        tsr_close(o->f);
        o->f = NULL;
    }
    s->active = 1;
}

static void on_meta(void *ctx, const tsr_file *f, const char *key, const char *value, int end)
{
    (void)f;
    (void)end;
    tsa_bb_follow *fw = ctx;
    tsa_bb_source *s = &fw->src[fw->cur];
    char *e;
    if (!strcmp(key, TSC_META_RANK)) {
        long v = strtol(value, &e, 10);
        s->rank = *e || v < -1 || v > 100000000 ? -1 : (int)v;
    } else if (!strcmp(key, TSC_META_WORLD_SIZE)) {
        long v = strtol(value, &e, 10);
        s->world_size = *e || v < 1 || v > 100000000 ? -1 : (int)v;
    } else if (!strcmp(key, TSC_META_RUN_ID)) {
        snprintf(s->run_id, sizeof s->run_id, "%s", value);
    } else if (!strcmp(key, TSC_META_MODE) && !strcmp(value, "blackbox")) {
        s->blackbox = 1;
    } else {
        tsa_self_cost_on_meta(&s->cost, key, value);
    }
    if (s->blackbox && !s->active && s->rank >= 0)
        elect(fw, s);
}

static void on_steps(void *ctx, const tsr_file *f, const tsc_step_summary *st,
                     const tsc_step_extra *x, size_t n)
{
    (void)f;
    tsa_bb_follow *fw = ctx;
    tsa_bb_source *s = &fw->src[fw->cur];
    if (!s->active || fw->restart)
        return; /* a restart reads everything again */
    s->delivered = 1;
    fw->cb(fw->cb_ctx, s, st, x, n);
}

static void on_problem(void *ctx, const char *path, uint64_t off, const char *msg)
{
    tsa_bb_follow *fw = ctx;
    fw->problems++;
    fprintf(stderr, "tscope-report: %s: offset %llu: %s\n", path, (unsigned long long)off, msg);
}

/* New dump files of the folder become sources (not opened yet). */
static int add_new_files(tsa_bb_follow *fw, char *err, size_t cap)
{
    char **paths = NULL;
    size_t n = 0;
    int rc = tsr_list_dumps(fw->dir, &paths, &n);
    if (rc < 0) {
        snprintf(err, cap, "%s: %s", fw->dir, strerror(-rc));
        tsr_free_paths(paths, n);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        size_t k = 0;
        while (k < fw->n && strcmp(fw->src[k].path, paths[i]))
            k++;
        if (k < fw->n)
            continue;
        if (fw->n == fw->cap) {
            size_t c2 = fw->cap ? fw->cap * 2 : 16;
            tsa_bb_source *p = realloc(fw->src, c2 * sizeof *p);
            if (!p)
                break;
            fw->src = p;
            fw->cap = c2;
        }
        tsa_bb_source *s = &fw->src[fw->n];
        memset(s, 0, sizeof *s);
        s->path = strdup(paths[i]);
        s->rank = -1;
        s->world_size = -1;
        if (s->path)
            fw->n++;
    }
    tsr_free_paths(paths, n);
    return 0;
}

/* Read what s gained since the last read (opening it once its header is
 * all there). */
static void read_source(tsa_bb_follow *fw, size_t i)
{
    tsa_bb_source *s = &fw->src[i];
    fw->cur = i;
    if (!s->f) {
        struct stat st;
        if (s->broken || (s->rank >= 0 && !s->active) || stat(s->path, &st) != 0 ||
            (uint64_t)st.st_size < sizeof(tsc_file_header))
            return; /* not ours, or its header is not written yet */
        tsr_callbacks cb = {.on_meta = on_meta, .on_steps = on_steps, .on_problem = on_problem};
        int status;
        s->f = tsr_follow_open(s->path, &cb, fw, &status);
        if (!s->f) {
            s->broken = 1;
            return;
        }
        s->created_ns = tsr_file_stats(s->f)->created_realtime_ns;
    }
    tsr_follow_read(s->f);
    /* META comes first in every dump: a file whose first chunk did not say
     * mode=blackbox is a default-mode dump, not followed. */
    if (!s->blackbox && tsr_file_stats(s->f)->meta_chunks) {
        tsr_close(s->f);
        s->f = NULL;
        s->broken = 1;
    } else if (s->blackbox && s->rank >= 0 && !s->active) {
        tsr_close(s->f); /* an older file of a rank: not read again */
        s->f = NULL;
    }
}

int tsa_bb_follow_poll(tsa_bb_follow *fw, tsa_bb_steps_fn cb, void (*on_reset)(void *ctx),
                       void *ctx, char *err, size_t cap)
{
    if (add_new_files(fw, err, cap) < 0)
        return -1;
    fw->cb = cb;
    fw->cb_ctx = ctx;
    for (size_t i = 0; i < fw->n; i++)
        read_source(fw, i);
    if (!fw->restart)
        return 0;
    /* Start afresh: every active file from its beginning. */
    fw->restart = 0;
    on_reset(ctx);
    for (size_t i = 0; i < fw->n; i++) {
        tsa_bb_source *s = &fw->src[i];
        tsr_close(s->f);
        s->f = NULL;
        s->delivered = 0;
    }
    for (size_t i = 0; i < fw->n; i++)
        read_source(fw, i);
    return 1;
}
