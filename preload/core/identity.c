#include "identity.h"

#include <stdio.h>
#include <string.h>

static int env_int(tsc_getenv_fn get, const char *var, int *out)
{
    uint64_t v;
    if (!var || tsc_parse_uint(get(var), 0, 0x7fffffff, &v) < 0)
        return -1;
    *out = (int)v;
    return 0;
}

/* Launchers in order of preference: torchrun's variables win because
 * torchrun often runs inside a Slurm allocation whose SLURM_PROCID is
 * the launcher's, not the worker's. */
static const struct {
    const char *source, *rank, *local, *size;
} rank_vars[] = {
    {"torchrun", "RANK", "LOCAL_RANK", "WORLD_SIZE"},
    {"slurm", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS"},
    {"openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE"},
    {"pmi", "PMI_RANK", NULL, "PMI_SIZE"},
};

void tsc_identity_from_env(tsc_identity *id, tsc_getenv_fn get)
{
    memset(id, 0, sizeof *id);
    id->rank = id->local_rank = id->world_size = id->restart = -1;
    id->rank_source = "none";
    for (size_t i = 0; i < sizeof rank_vars / sizeof rank_vars[0]; i++) {
        int r;
        if (env_int(get, rank_vars[i].rank, &r) < 0)
            continue;
        id->rank = r;
        id->rank_source = rank_vars[i].source;
        env_int(get, rank_vars[i].local, &id->local_rank);
        env_int(get, rank_vars[i].size, &id->world_size);
        break;
    }
    env_int(get, "TORCHELASTIC_RESTART_COUNT", &id->restart);

    const char *v;
    if ((v = get("TSCOPE_RUN_ID")) && *v) {
        snprintf(id->run_id, sizeof id->run_id, "%s", v);
        id->run_id_source = "TSCOPE_RUN_ID";
    } else if ((v = get("TORCHELASTIC_RUN_ID")) && *v) {
        snprintf(id->run_id, sizeof id->run_id, "%s", v);
        id->run_id_source = "torchrun";
    } else if ((v = get("SLURM_JOB_ID")) && *v) {
        const char *step = get("SLURM_STEP_ID");
        if (step && *step)
            snprintf(id->run_id, sizeof id->run_id, "%s.%s", v, step);
        else
            snprintf(id->run_id, sizeof id->run_id, "%s", v);
        id->run_id_source = "slurm";
    } else if ((v = get("OMPI_MCA_ess_base_jobid")) && *v) {
        snprintf(id->run_id, sizeof id->run_id, "%s", v);
        id->run_id_source = "openmpi";
    } else {
        snprintf(id->run_id, sizeof id->run_id, "none");
        id->run_id_source = "none";
    }
}
