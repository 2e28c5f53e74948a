/* Generated torch.profiler jobs for the batch tests (batch_jobs.h). */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "batch_jobs.h"
#include "kineto_gen.h"

int tb_write_job(const char *root, const char *name, const char *host, int straggler,
                 int delay_us)
{
    char dir[512];
    if ((size_t)snprintf(dir, sizeof dir, "%s/%s", root, name) >= sizeof dir)
        return -1;
    for (char *p = dir + strlen(root) + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(dir, 0777);
            *p = '/';
        }
    if (mkdir(dir, 0777))
        return -1;
    for (int rank = 0; rank < 4; rank++) {
        char path[600];
        snprintf(path, sizeof path, "%s/%s%d_%d.1.pt.trace.json", dir, host,
                 rank == straggler ? 9 : 0, KGEN_PID(rank));
        kgen_opts o = {.rank = rank, .world_size = 4, .steps = 12,
                       .base_ns = 1700000000000000000LL,
                       .delay_us = rank == straggler ? delay_us : 0, .with_seq = 1};
        if (kgen_write(path, &o))
            return -1;
    }
    return 0;
}
