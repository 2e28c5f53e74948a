/* The recorder's configuration: read from the environment once, by the
 * constructor or by the first caller that needs it (tests). */
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "config.h"
#include "config_warn.h"
#include "rec_state.h"
#include "recorder_internal.h"
#include "warn.h"

static _Atomic int g_cfg_loaded;

const char *tsc_rec_getenv(const char *name) { return getenv(name); }

void tsc_rec_load_config(void)
{
    int expect = 0;
    /* 2 = loading, 1 = loaded: concurrent first users wait briefly. */
    static _Atomic int loading;
    if (atomic_load(&g_cfg_loaded))
        return;
    if (!atomic_compare_exchange_strong(&loading, &expect, 1)) {
        while (!atomic_load(&g_cfg_loaded))
            sched_yield();
        return;
    }
    tsc_config c;
    /* QUIET decides whether the other variables' warnings are printed. */
    tsc_config_load(&c, tsc_rec_getenv, NULL);
    tsc_warn_set_quiet(c.quiet);
    /* held until this process records, then printed once per job */
    tsc_config_load(&c, tsc_rec_getenv, tsc_config_warn_defer);
    tsc_rec_g.cfg = c;
    atomic_store(&g_cfg_loaded, 1);
    if (tsc_rec_g.cfg.disabled)
        atomic_store(&tsc_rec_state_g, TSC_REC_OFF);
}

const tsc_config *tsc_rec_config(void)
{
    tsc_rec_load_config();
    return &tsc_rec_g.cfg;
}
