/* The one table of rule families (rules.h). */
#include "rules.h"

#include <stddef.h>

typedef int (*family_fn)(const tsa_analysis *a, tsa_findings *out);

static const family_fn families[] = {
#define TSA_FINDING_FAMILY_FN(name) tsa_##name##_findings,
    TSA_FINDING_FAMILIES(TSA_FINDING_FAMILY_FN)
#undef TSA_FINDING_FAMILY_FN
};

int tsa_findings_run(const tsa_analysis *a, tsa_findings *out)
{
    for (size_t i = 0; i < sizeof families / sizeof families[0]; i++)
        if (families[i](a, out))
            return -1;
    return 0;
}
