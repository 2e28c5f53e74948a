/* Communication that is not named nccl*: which collective a CPU op or a
 * kernel of another library performs, read from the words of its name
 * (symm_mem::multimem_all_reduce_, c10d::allgather_, vllm's
 * cross_device_reduce, DeepEP's dispatch and combine).  Used by the
 * builder to make such kernels collectives (kineto_build.c). */
#include "kineto_internal.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "tsc_format.h"

/* name with '_' and case ignored contains word */
static int has_squashed(const char *name, const char *word)
{
    size_t wl = strlen(word);
    for (const char *p = name; *p; p++) {
        size_t i = 0;
        const char *q = p;
        while (*q && i < wl) {
            if (*q == '_') {
                q++;
                continue;
            }
            if (tolower((unsigned char)*q) != word[i])
                break;
            q++;
            i++;
        }
        if (i == wl)
            return 1;
    }
    return 0;
}

int kineto_comm_op_from_words(const char *name)
{
    static const struct {
        const char *word;
        int op;
    } words[] = {
        {"allreduce", TSC_NCCL_ALLREDUCE},
        {"crossdevicereduce", TSC_NCCL_ALLREDUCE},
        {"quickreduce", TSC_NCCL_ALLREDUCE},
        {"reducescatter", TSC_NCCL_REDUCESCATTER},
        {"allgather", TSC_NCCL_ALLGATHER},
        {"alltoall", TSC_NCCL_ALLTOALL},
        {"dispatch", TSC_NCCL_ALLTOALL},   /* expert-parallel token exchange */
        {"combine", TSC_NCCL_ALLTOALL},
        {"broadcast", TSC_NCCL_BROADCAST},
    };
    if (!name)
        return 0;
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (has_squashed(name, words[i].word))
            return words[i].op;
    return 0;
}

/* CPU ops of the process-group and symmetric-memory layers: every kernel
 * they launch is communication. */
int kineto_is_comm_cpu_op(const char *name)
{
    return name && (!strncmp(name, "c10d::", 6) || !strncmp(name, "symm_mem::", 10) ||
                    !strncmp(name, "_c10d_functional::", 18) ||
                    !strcmp(name, "record_param_comms"));
}
