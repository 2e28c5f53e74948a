/* The bounds on one Kineto trace file (kineto.h): defaults, environment,
 * or what a caller set. */
#include <stdlib.h>

#include "kineto.h"

static int limits_set;
static tsa_kineto_limits set_limits;

/* A plain non-negative integer from the environment, else dflt. */
static uint64_t env_u64(const char *name, uint64_t dflt)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return dflt;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    return *end || s[0] == '-' ? dflt : (uint64_t)v;
}

void tsa_kineto_get_limits(tsa_kineto_limits *out)
{
    if (limits_set) {
        *out = set_limits;
        return;
    }
    out->max_bytes = env_u64("TSCOPE_KINETO_MAX_BYTES", TSA_KINETO_DEFAULT_MAX_BYTES);
    out->max_events = env_u64("TSCOPE_KINETO_MAX_EVENTS", TSA_KINETO_DEFAULT_MAX_EVENTS);
    out->max_token = env_u64("TSCOPE_KINETO_MAX_TOKEN", TSA_KINETO_DEFAULT_MAX_TOKEN);
}

void tsa_kineto_set_limits(const tsa_kineto_limits *l)
{
    limits_set = l != NULL;
    if (l)
        set_limits = *l;
}
