/* Seed jobs for the pipeline fuzzers (pipeline_seeds.h). */
#include "pipeline_seeds.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gen_job.h"
#include "kineto_gen.h"
#include "test_util.h"

/* The first file in dir whose name holds `tag` (rank 1's). */
static int find_file(const char *dir, const char *tag, char *out, size_t cap)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    struct dirent *e;
    int rc = -1;
    while ((e = readdir(d)))
        if (strstr(e->d_name, tag)) {
            snprintf(out, cap, "%s/%s", dir, e->d_name);
            rc = 0;
            break;
        }
    closedir(d);
    return rc;
}

static int load_victim(pipeline_seed *s, const char *tag)
{
    if (find_file(s->dir, tag, s->victim, sizeof s->victim))
        return -1;
    s->orig = (uint8_t *)tu_read_file(s->victim, &s->orig_len);
    return s->orig ? 0 : -1;
}

int pipeline_seeds_make(const char *root, pipeline_seed *dumps, pipeline_seed *kineto)
{
    memset(dumps, 0, sizeof *dumps);
    memset(kineto, 0, sizeof *kineto);
    snprintf(dumps->dir, sizeof dumps->dir, "%s/dumps", root);
    gen_options o;
    gen_default_options(&o);
    o.ranks = 2;
    o.steps = 4;
    o.events_per_step = 24;
    /* Device-memory records (format 1.1), so mutations reach their
     * loader and the memory pass. */
    o.mem_base = 64u << 20;
    o.mem_leak = 2u << 20;
    o.mem_churn = 8u << 20;
    o.mem_pool = 16u << 20;
    o.mem_free = 128u << 20;
    o.dir = dumps->dir;
    gen_truth t;
    if (gen_job(&o, &t) || load_victim(dumps, "tscope_r1_"))
        return -1;

    snprintf(kineto->dir, sizeof kineto->dir, "%s/kineto", root);
    if (mkdir(kineto->dir, 0777))
        return -1;
    for (int rank = 0; rank < 2; rank++) {
        char path[700];
        snprintf(path, sizeof path, "%s/node0_%d.1.pt.trace.json", kineto->dir, KGEN_PID(rank));
        kgen_opts k = {.rank = rank, .world_size = 2, .steps = 3,
                       .base_ns = 1700000000000000000LL, .with_seq = 1, .odd_names = rank};
        if (kgen_write(path, &k))
            return -1;
    }
    return load_victim(kineto, "_4001.");
}

void pipeline_seeds_free(pipeline_seed *s)
{
    free(s->orig);
    s->orig = NULL;
}

int pipeline_seed_put(const pipeline_seed *s, const uint8_t *data, size_t len)
{
    return tu_write_file(s->victim, (const char *)data, len);
}
