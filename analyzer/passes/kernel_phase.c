#include "kernel_phase.h"

#include <string.h>

#include "load/job_build.h"

static int is_autograd_thread(const tsa_rank *r, uint32_t tid)
{
    return tid && !strncmp(tsa_rank_thread_name(r, tid), "pt_autograd", 11);
}

/* The optimizer by name, backward when launched from an autograd device
 * thread, forward otherwise. */
tsa_phase tsa_kernel_phase(const tsa_rank *r, const tsa_kernel *k)
{
    if (k->category == TSA_KCAT_COMM)
        return TSA_PHASE_COMM;
    if (k->category == TSA_KCAT_OPTIMIZER)
        return TSA_PHASE_OPTIMIZER;
    if (is_autograd_thread(r, k->launch_tid))
        return TSA_PHASE_BACKWARD;
    return TSA_PHASE_FORWARD;
}
