/* tsc-gen-kineto DIR RANKS STEPS [PAD] [gz] [nodist]: a job of synthetic
 * torch.profiler traces (benchmarks, manual runs).  PAD adds tiny kernels
 * per step to reach a target event count; gz writes .json.gz; nodist
 * leaves out distributedInfo (the loader then numbers ranks by file). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kineto_gen.h"

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: tsc-gen-kineto DIR RANKS STEPS [PAD_KERNELS] [gz] [nodist]\n");
        return 2;
    }
    const char *dir = argv[1];
    int ranks = atoi(argv[2]), steps = atoi(argv[3]);
    int pad = argc > 4 ? atoi(argv[4]) : 0;
    int gz = 0, nodist = 0;
    for (int i = 5; i < argc; i++) {
        if (!strcmp(argv[i], "gz")) {
            gz = 1;
        } else if (!strcmp(argv[i], "nodist")) {
            nodist = 1;
        } else {
            fprintf(stderr, "tsc-gen-kineto: unknown word %s\n", argv[i]);
            return 2;
        }
    }
    if (ranks <= 0 || steps <= 0 || pad < 0) {
        fprintf(stderr, "tsc-gen-kineto: bad numbers\n");
        return 2;
    }
    char parents[4096];
    snprintf(parents, sizeof parents, "%s", dir);
    for (char *p = parents + 1; *p; p++)   /* mkdir -p */
        if (*p == '/') {
            *p = '\0';
            mkdir(parents, 0777);
            *p = '/';
        }
    mkdir(dir, 0777);
    for (int r = 0; r < ranks; r++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/host%d_%d.1700000000.pt.trace.json%s", dir, r / 8,
                 KGEN_PID(r), gz ? ".gz" : "");
        kgen_opts o = {.rank = r, .world_size = ranks, .steps = steps,
                       .base_ns = 1700000000000000000LL, .delay_us = r == ranks - 1 ? 30 : 0,
                       .with_seq = 1, .gzip = gz, .pad_kernels = pad,
                       .no_dist_info = nodist};
        if (kgen_write(path, &o)) {
            fprintf(stderr, "tsc-gen-kineto: cannot write %s\n", path);
            return 1;
        }
    }
    return 0;
}
