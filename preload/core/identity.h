/* Who this process is in the job: rank, world size and run id from the
 * variables the common launchers set (torchrun, Slurm, Open MPI, PMI).
 * Pure functions of an environment lookup so they can be tested. */
#ifndef TSC_IDENTITY_H
#define TSC_IDENTITY_H

#include "config.h"

typedef struct tsc_identity {
    int rank;              /* -1 when unknown */
    int local_rank;        /* -1 when unknown */
    int world_size;        /* -1 when unknown */
    int restart;           /* TORCHELASTIC_RESTART_COUNT, -1 when unknown */
    const char *rank_source; /* torchrun, slurm, openmpi, pmi, none */
    char run_id[256];
    const char *run_id_source; /* TSCOPE_RUN_ID, torchrun, slurm, openmpi, none */
} tsc_identity;

void tsc_identity_from_env(tsc_identity *id, tsc_getenv_fn get);

#endif
