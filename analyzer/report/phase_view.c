#include "phase_view.h"

#include "load/job_build.h"

static int backward_seen(const tsa_analysis *a)
{
    for (size_t i = 0; i < a->n_ranks; i++)
        if (a->ranks[i].phase_ns[TSA_PHASE_BACKWARD] > 0)
            return 1;
    return 0;
}

const char *tsa_phase_label(const tsa_analysis *a, tsa_phase p)
{
    switch (p) {
    case TSA_PHASE_COMM:
    case TSA_PHASE_OTHER:
        return tsa_phase_name(p);
    case TSA_PHASE_FORWARD:
        if (!a->gpu)
            return "compute (host)";
        return backward_seen(a) ? tsa_phase_name(p) : "compute (fwd+bwd)";
    case TSA_PHASE_BACKWARD:
        return a->gpu && backward_seen(a) ? tsa_phase_name(p) : NULL;
    case TSA_PHASE_DATA:
    case TSA_PHASE_OPTIMIZER:
    case TSA_PHASE_IDLE:
        return a->gpu ? tsa_phase_name(p) : NULL;
    default:
        return NULL;
    }
}

int tsa_phase_measured(const tsa_analysis *a, tsa_phase p)
{
    if (p == TSA_PHASE_FORWARD)
        return a->gpu && backward_seen(a);
    return tsa_phase_label(a, p) != NULL;
}
