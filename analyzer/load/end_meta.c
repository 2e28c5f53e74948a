/* The END/META keys that say how a rank's process ended. */
#include "end_meta.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tsc_format.h"

static int64_t parse_ns(const char *v)
{
    char *end;
    unsigned long long x = strtoull(v, &end, 10);
    return end == v || x > (1ull << 62) ? 0 : (int64_t)x;
}

void tsa_load_end_meta(tsa_rank_end *end, const char *key, const char *value)
{
    if (!strcmp(key, TSC_META_END_REASON)) {
        snprintf(end->reason, sizeof end->reason, "%s", value);
    } else if (!strcmp(key, TSC_META_EXIT_CODE)) {
        char *e;
        long v = strtol(value, &e, 10);
        if (e != value && v >= 0 && v <= 255) {
            end->has_exit_code = 1;
            end->exit_code = (int32_t)v;
        }
    } else if (!strcmp(key, TSC_META_END_REALTIME) || !strcmp(key, TSC_META_ANCHOR_REALTIME)) {
        int64_t t = parse_ns(value);
        if (t > end->last_ns)
            end->last_ns = t;
    }
}
