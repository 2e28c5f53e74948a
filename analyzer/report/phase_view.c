#include "phase_view.h"

#include "load/job_build.h"

static int backward_seen(const tsa_analysis *a)
{
    for (size_t i = 0; i < a->n_ranks; i++)
        if (a->ranks[i].phase_ns[TSA_PHASE_BACKWARD] > 0)
            return 1;
    return 0;
}

static int optimizer_seen(const tsa_analysis *a)
{
    return a->kcat_count[TSA_KCAT_OPTIMIZER] > 0;
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
        /* no backward and no optimizer seen: an inference trace, or one
         * that cannot tell; "fwd+bwd" would claim a backward pass */
        return backward_seen(a) ? tsa_phase_name(p)
               : optimizer_seen(a) ? "compute (fwd+bwd)"
                                   : "compute";
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
