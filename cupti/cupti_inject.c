/* How the GPU capture starts: the library constructor points the CUDA
 * driver (CUDA_INJECTION64_PATH) and NVTX (NVTX_INJECTION64_PATH) at this
 * library, and their injection entry points start the CUPTI session
 * (cupti_session.c).  Nothing here runs CUPTI unless the process
 * initialises CUDA (or emits NVTX): the constructor only reads and sets
 * environment variables.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cupti_api.h"
#include "cupti_control.h"
#include "cupti_mode.h"
#include "recorder.h"

/* Route NVTX to CUPTI through us, unless off or someone else routes it.
 * Returns 1 when NVTX_INJECTION64_PATH names this library. */
static int route_nvtx(const char *self_path, tsc_cupti_mode mode)
{
    const char *now = getenv("NVTX_INJECTION64_PATH");
    if (now != NULL && strcmp(now, self_path) == 0)
        return 1; /* inherited from a tscope parent */
    if (!tsc_nvtx_wanted(getenv("TSCOPE_NVTX"), now, mode))
        return 0;
    return setenv("NVTX_INJECTION64_PATH", self_path, 0) == 0;
}

void tsc_cupti_constructor_hook(void)
{
    int unknown = 0;
    const char *mode_env = getenv("TSCOPE_CUPTI");
    tsc_cupti_mode mode = tsc_cupti_mode_parse(mode_env, &unknown);
    if (unknown)
        tsc_warn_once("cupti_mode", "TSCOPE_CUPTI=%s not understood (off, light, full): using full",
                      mode_env);

    char self[PATH_MAX];
    const char *self_path = NULL;
    Dl_info info;
    /* Absolute, so children started from another directory inherit a
     * working path. */
    if (dladdr((void *)tsc_cupti_constructor_hook, &info) && info.dli_fname &&
        realpath(info.dli_fname, self) != NULL)
        self_path = self;

    const char *current = getenv("CUDA_INJECTION64_PATH");
    tsc_inject_action action = tsc_inject_decide(current, mode, self_path);
    int nvtx = 0;
    if (action == TSC_INJECT_SET || action == TSC_INJECT_ALREADY_OURS)
        nvtx = route_nvtx(self_path, mode);
    tsc_cupti_configure(mode, nvtx);

    switch (action) {
    case TSC_INJECT_SET:
        setenv("CUDA_INJECTION64_PATH", self_path, 0);
        tsc_rec_meta(TSC_META_CUPTI_MODE, tsc_cupti_mode_name(mode));
        break;
    case TSC_INJECT_ALREADY_OURS:
        tsc_rec_meta(TSC_META_CUPTI_MODE, tsc_cupti_mode_name(mode));
        break;
    case TSC_INJECT_FOREIGN:
        tsc_warn_once("cupti_foreign",
                      "CUDA_INJECTION64_PATH is set by another tool (%s): tscope leaves CUPTI "
                      "alone, NCCL capture continues",
                      current);
        tsc_rec_meta(TSC_META_CUPTI_MODE, "off");
        tsc_rec_meta(TSC_META_CUPTI_STATUS, "another tool's injection");
        tsc_rec_meta(TSC_META_CUPTI_OTHER, current);
        break;
    case TSC_INJECT_DISABLED:
        tsc_rec_meta(TSC_META_CUPTI_MODE, "off");
        break;
    case TSC_INJECT_NO_SELF:
        tsc_rec_meta(TSC_META_CUPTI_MODE, "off");
        tsc_rec_meta(TSC_META_CUPTI_STATUS, "library path unknown");
        break;
    }
}

/* Called by the CUDA driver from cuInit. */
__attribute__((visibility("default"))) int InitializeInjection(void)
{
    static atomic_int once;
    if (atomic_exchange(&once, 1))
        return 1;
    tsc_cupti_mode mode = tsc_cupti_current_mode();
    if (mode == TSC_CUPTI_OFF || !tsc_rec_active())
        return 1;
    tsc_rec_meta(TSC_META_CUPTI_MODE, tsc_cupti_mode_name(mode));
    tsc_cupti_start();
    /* Success for the driver either way: a failed profiler must not fail
     * the application's cuInit. */
    return 1;
}

/* NVTX's injection entry point (NVTX_INJECTION64_PATH names this
 * library): forward to CUPTI's own, which records NVTX ranges as MARKER
 * activity.  0 tells NVTX to stay uninstrumented. */
typedef const void *(*nvtx_export_table_fn)(uint32_t);
typedef int (*nvtx_init_fn)(nvtx_export_table_fn);

__attribute__((visibility("default"))) int InitializeInjectionNvtx2(nvtx_export_table_fn get)
{
    if (!tsc_cupti_nvtx_routed() || get == NULL)
        return 0;
    void *cupti = tsc_cupti_open();
    if (cupti == NULL)
        return 0;
    nvtx_init_fn init = (nvtx_init_fn)dlsym(cupti, "InitializeInjectionNvtx2");
    return init != NULL ? init(get) : 0;
}
