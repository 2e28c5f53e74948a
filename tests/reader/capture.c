#include <stdio.h>
#include <string.h>

#include "capture.h"

static void on_meta(void *ctx, const tsr_file *f, const char *k, const char *v, int end)
{
    (void)f;
    (void)k;
    (void)v;
    capture *c = ctx;
    c->n_meta++;
    c->n_end_meta += end != 0;
}

static void on_desc(void *ctx, const tsr_file *f, const tsr_desc *d)
{
    (void)f;
    capture *c = ctx;
    if (c->n_desc < CAP_MAX)
        c->desc[c->n_desc++] = d;
}

static void on_event(void *ctx, const tsr_file *f, const tsr_event *e)
{
    (void)f;
    capture *c = ctx;
    if (c->n_ev < CAP_MAX)
        c->ev[c->n_ev++] = *e;
}

static void on_problem(void *ctx, const char *path, uint64_t off, const char *msg)
{
    capture *c = ctx;
    snprintf(c->prob_path, sizeof c->prob_path, "%s", path);
    if (c->n_prob < CAP_MAX) {
        c->prob_off[c->n_prob] = off;
        snprintf(c->prob_msg[c->n_prob], sizeof c->prob_msg[0], "%s", msg);
        c->n_prob++;
    }
}

const tsr_callbacks capture_callbacks = {
    .on_meta = on_meta, .on_desc = on_desc, .on_event = on_event, .on_problem = on_problem};

int capture_find_problem(const capture *c, const char *needle)
{
    for (size_t i = 0; i < c->n_prob; i++)
        if (strstr(c->prob_msg[i], needle))
            return (int)i;
    return -1;
}
