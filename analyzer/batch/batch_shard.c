/* `batch --shard I/N`: which jobs one shard of a batch analyses.
 *
 * A job's shard is a hash of its canonical path (realpath), not its place
 * in the sorted list: with list positions, one new job would shift every
 * later job to another shard, and a re-run shard would redo jobs another
 * shard had already summarised.  The hash is FNV-1a 64, fixed here (not a
 * library's, whose seed or algorithm may change), so shard I means the
 * same jobs on every node and every tscope version. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "util/hash.h"

/* Up to a million shards: more than any job array needs, few enough that a
 * typo (an extra digit) is caught. */
#define MAX_SHARDS 1000000UL

static int parse_ulong(const char *s, const char *end, unsigned long *v)
{
    if (s == end || end - s > 7)
        return -1;
    unsigned long x = 0;
    for (const char *p = s; p < end; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        x = x * 10 + (unsigned long)(*p - '0');
    }
    *v = x;
    return 0;
}

int tsa_batch_shard_parse(const char *spec, tsa_batch_shard *shard, char *err, size_t cap)
{
    const char *slash = spec ? strchr(spec, '/') : NULL;
    unsigned long i, n;
    if (!slash || parse_ulong(spec, slash, &i) || parse_ulong(slash + 1, slash + strlen(slash), &n)) {
        snprintf(err, cap, "bad --shard '%s': expected I/N, two whole numbers, e.g. 0/4",
                 spec ? spec : "");
        return -1;
    }
    if (n < 1 || n > MAX_SHARDS) {
        snprintf(err, cap, "bad --shard '%s': N must be 1..%lu", spec, MAX_SHARDS);
        return -1;
    }
    if (i >= n) {
        snprintf(err, cap, "bad --shard '%s': I must be 0..%lu (shards count from 0)", spec,
                 n - 1);
        return -1;
    }
    shard->index = i;
    shard->count = n;
    return 0;
}

unsigned long tsa_batch_shard_of(const char *job, unsigned long count)
{
    /* the canonical path, so `base/x`, `./base/x` and a symlink agree;
     * a job that vanished since it was found hashes as spelled */
    char *real = realpath(job, NULL);
    const char *path = real ? real : job;
    unsigned long s = count ? (unsigned long)(tsa_fnv1a(path, strlen(path)) % count) : 0;
    free(real);
    return s;
}

void tsa_batch_shard_filter(const tsa_batch_shard *shard, char **jobs, size_t *n)
{
    size_t keep = 0;
    for (size_t i = 0; i < *n; i++) {
        if (tsa_batch_shard_of(jobs[i], shard->count) == shard->index)
            jobs[keep++] = jobs[i];
        else
            free(jobs[i]);
    }
    *n = keep;
}
