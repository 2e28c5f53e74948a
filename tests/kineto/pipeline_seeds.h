/* Seed jobs for the pipeline fuzzers: a 2-rank job of tscope dumps and a
 * 2-rank job of torch.profiler traces, small, generated at run time.  The
 * fuzzers replace rank 1's file with a mutation and keep rank 0 intact, so
 * the cross-rank passes see a good rank beside a hostile one. */
#ifndef VIEWS_PIPELINE_SEEDS_H
#define VIEWS_PIPELINE_SEEDS_H

#include <stddef.h>
#include <stdint.h>

typedef struct pipeline_seed {
    char dir[512];          /* the job directory */
    char victim[1024];      /* rank 1's file in it, rewritten by the fuzzer */
    uint8_t *orig;          /* rank 1's original bytes (JSON decompressed) */
    size_t orig_len;
} pipeline_seed;

/* Under root: root/dumps and root/kineto.  0, or -1 on failure. */
int pipeline_seeds_make(const char *root, pipeline_seed *dumps, pipeline_seed *kineto);
void pipeline_seeds_free(pipeline_seed *s);

/* Write data as the seed's victim file; 0 or -1. */
int pipeline_seed_put(const pipeline_seed *s, const uint8_t *data, size_t len);

#endif
