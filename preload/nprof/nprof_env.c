/* Pointing NCCL's profiler-plugin loader at this library, so NCCL loads
 * the object already preloaded (dlopen of the same file returns the same
 * handle: one recorder, one dump) rather than a second copy. */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nprof_env.h"
#include "nprof_pool.h"
#include "recorder.h"

static enum tsc_np_mode g_mode = TSC_NP_LIGHT;

enum tsc_np_mode tsc_np_mode(void) { return g_mode; }

static int g_pointed; /* NCCL_PROFILER_PLUGIN names this library */

int tsc_np_pointed(void) { return g_pointed; }

static enum tsc_np_mode parse_mode(const char *v)
{
    if (!v || !*v || !strcasecmp(v, "light"))
        return TSC_NP_LIGHT;
    if (!strcasecmp(v, "full"))
        return TSC_NP_FULL;
    if (!strcasecmp(v, "off") || !strcmp(v, "0"))
        return TSC_NP_OFF;
    tsc_warn_once("np_mode", "TSCOPE_NCCL_PROFILER=%s is not off, light or full; using light", v);
    return TSC_NP_LIGHT;
}

/* TSCOPE_NP_POOLS="colls,ops,steps,spans": the handle pools' slot counts
 * (tests make them small to run out; nprof_pool.h rounds them).  Read at
 * the first communicator's init, never on an event's path. */
void tsc_np_pool_counts(uint32_t counts[4])
{
    const uint32_t dflt[4] = {NP_POOL_COLLS, NP_POOL_OPS, NP_POOL_STEPS, NP_POOL_SPANS};
    memcpy(counts, dflt, sizeof dflt);
    const char *v = getenv("TSCOPE_NP_POOLS");
    unsigned long x[4];
    if (!v || !*v)
        return;
    if (sscanf(v, "%lu,%lu,%lu,%lu", &x[0], &x[1], &x[2], &x[3]) != 4) {
        tsc_warn_once("np_pools", "TSCOPE_NP_POOLS=%s is not four counts "
                      "(colls,ops,steps,spans); using the defaults", v);
        return;
    }
    for (int i = 0; i < 4; i++)
        counts[i] = x[i] > NP_POOL_MAX ? NP_POOL_MAX : x[i] < NP_POOL_MIN ? NP_POOL_MIN
                                                                           : (uint32_t)x[i];
}

/* 1 when the user's value names this very file. */
static int names_us(const char *value, const char *self)
{
    char a[PATH_MAX], b[PATH_MAX];
    return realpath(value, a) && realpath(self, b) && !strcmp(a, b);
}

void tsc_np_env_setup(void)
{
    g_mode = parse_mode(getenv("TSCOPE_NCCL_PROFILER"));
    if (g_mode == TSC_NP_OFF)
        return;
    Dl_info info;
    char self[PATH_MAX];
    /* An absolute path: NCCL may dlopen it from another working directory. */
    if (!dladdr((void *)tsc_np_env_setup, &info) || !info.dli_fname ||
        !realpath(info.dli_fname, self))
        return;
    const char *user = getenv("NCCL_PROFILER_PLUGIN");
    if (!user || !*user) {
        setenv("NCCL_PROFILER_PLUGIN", self, 1);
        g_pointed = 1;
        return;
    }
    if (names_us(user, self)) {
        g_pointed = 1;
        return;
    }
    tsc_rec_meta(TSC_META_NP, "stepped aside for the user's NCCL_PROFILER_PLUGIN");
    tsc_warn_once("np_user", "NCCL_PROFILER_PLUGIN=%s is the user's: tscope's NCCL profiler "
                      "plugin stepped aside (NCCL calls are still recorded, without their "
                      "proxy steps)", user);
}
