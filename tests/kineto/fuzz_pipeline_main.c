/* libFuzzer harness of the whole pipeline (scripts/fuzz-pipeline.sh).  The
 * first input byte picks the seed job (even: tscope dumps, odd: torch.profiler
 * traces); the rest becomes rank 1's file, beside a good rank 0.  A broken
 * output rule aborts, so libFuzzer keeps the input as a crash. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_pipeline.h"
#include "pipeline_seeds.h"
#include "test_util.h"

static char *root;
static pipeline_seed dumps, kineto;

static void remove_root(void)
{
    tu_rmtree(root);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    root = tu_tempdir("fuzz-pipeline");
    if (!root || pipeline_seeds_make(root, &dumps, &kineto)) {
        fprintf(stderr, "fuzz-pipeline: cannot make the seed jobs\n");
        exit(2);
    }
    atexit(remove_root);
    const char *seeds = getenv("FUZZ_PIPELINE_SEEDS");
    if (seeds) {
        /* the seeds as inputs: tag byte, then rank 1's file */
        const pipeline_seed *both[2] = {&dumps, &kineto};
        for (int k = 0; k < 2; k++) {
            char path[4096];
            snprintf(path, sizeof path, "%s/seed_%s", seeds, k ? "kineto" : "dumps");
            FILE *f = fopen(path, "wb");
            if (f) {
                fputc(k, f);
                fwrite(both[k]->orig, 1, both[k]->orig_len, f);
                fclose(f);
            }
        }
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!size)
        return 0;
    pipeline_seed *s = data[0] & 1 ? &kineto : &dumps;
    if (pipeline_seed_put(s, data + 1, size - 1))
        return 0;
    static fuzz_pipeline_stats st;
    char why[256];
    if (fuzz_pipeline_dir(s->dir, root, &st, why, sizeof why)) {
        fprintf(stderr, "fuzz-pipeline: %s\n", why);
        abort();
    }
    return 0;
}
