/* Unique-id exchange through a file (see rank_rdzv.h). */
#include "rank_rdzv.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TB_RDZV_FILE "nccl_ids"

static int write_ids(const char *dir, const void *ids, size_t bytes)
{
    char tmp[4096], path[4096];
    snprintf(tmp, sizeof tmp, "%s/." TB_RDZV_FILE ".%d", dir, (int)getpid());
    snprintf(path, sizeof path, "%s/" TB_RDZV_FILE, dir);
    FILE *f = fopen(tmp, "wb");
    if (!f || fwrite(ids, 1, bytes, f) != bytes || fclose(f) != 0) {
        fprintf(stderr, "tsc-testbed-rank: cannot write %s: %s\n", tmp, strerror(errno));
        return -1;
    }
    if (rename(tmp, path) != 0) {
        fprintf(stderr, "tsc-testbed-rank: cannot rename to %s: %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

static int read_ids(const char *dir, void *ids, size_t bytes, int timeout_s)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/" TB_RDZV_FILE, dir);
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        FILE *f = fopen(path, "rb");
        if (f) {
            size_t got = fread(ids, 1, bytes, f);
            fclose(f);
            if (got == bytes)
                return 0;
            fprintf(stderr, "tsc-testbed-rank: %s holds %zu bytes, want %zu\n", path, got,
                    bytes);
            return -1;
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - start.tv_sec >= timeout_s) {
            fprintf(stderr, "tsc-testbed-rank: no rendezvous file %s after %d s\n", path,
                    timeout_s);
            return -1;
        }
        usleep(1000);
    }
}

int tb_rdzv_exchange(const char *dir, int rank, void *ids, size_t size, size_t n,
                     int timeout_s)
{
    return rank == 0 ? write_ids(dir, ids, size * n) : read_ids(dir, ids, size * n, timeout_s);
}
