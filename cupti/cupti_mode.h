/* Configuration of the GPU capture, decided from the environment.
 *
 * Pure functions (no CUDA, no CUPTI): the constructor hook and
 * InitializeInjection call them with getenv() values; tests call them with
 * literals.
 */
#ifndef TSC_CUPTI_MODE_H
#define TSC_CUPTI_MODE_H

#include <stdint.h>

/* TSCOPE_CUPTI values.  full is the default: the efficiency budget needs
 * the GPU's busy time, which only per-kernel records give.  light is for
 * always-on fleets: it drops kernel tracing (CUPTI's per-kernel cost) and
 * keeps copies, memsets, syncs, NCCL's cuLaunchKernelEx launch records and
 * the GEMM interposition. */
typedef enum tsc_cupti_mode {
    TSC_CUPTI_OFF = 0,
    TSC_CUPTI_LIGHT = 1,
    TSC_CUPTI_FULL = 2,
} tsc_cupti_mode;

/* Parse TSCOPE_CUPTI (NULL or "" = default full).  Accepts off/0/no/false,
 * light, full/on/1/yes/true, case-insensitive.  An unknown value gives full
 * and sets *unknown to 1 so the caller can warn once. */
tsc_cupti_mode tsc_cupti_mode_parse(const char *value, int *unknown);

/* "off", "light" or "full". */
const char *tsc_cupti_mode_name(tsc_cupti_mode m);

/* What the constructor does with CUDA_INJECTION64_PATH. */
typedef enum tsc_inject_action {
    TSC_INJECT_SET = 0,          /* set it to our own library path */
    TSC_INJECT_ALREADY_OURS = 1, /* already points at us (inherited): keep */
    TSC_INJECT_FOREIGN = 2,      /* another tool (nsys, ncu) owns it: leave CUPTI alone */
    TSC_INJECT_DISABLED = 3,     /* TSCOPE_CUPTI=off */
    TSC_INJECT_NO_SELF = 4,      /* our own path is unknown: cannot inject */
} tsc_inject_action;

/* Decide from the current CUDA_INJECTION64_PATH value (may be NULL), the
 * parsed mode and our own library path (may be NULL).  A value naming a
 * file with the same basename as ours counts as ours, so a child process
 * that inherited the variable from a tscope parent keeps working. */
tsc_inject_action tsc_inject_decide(const char *current, tsc_cupti_mode mode,
                                    const char *self_path);

/* NVTX ranges through CUPTI: on unless the capture is off, TSCOPE_NVTX
 * says off/0/no/false, or NVTX_INJECTION64_PATH is already set (nsys). */
int tsc_nvtx_wanted(const char *tscope_nvtx, const char *nvtx_injection, tsc_cupti_mode mode);

/* CUPTI runtime versions whose activity record layouts this build reads:
 * the major of the headers we compiled against (CUDA 13: 130000..139999).
 * CUDA 12's CUPTI writes older structs (Kernel9, Memcpy5...), which would
 * be misread, so it is refused.  `compiled` is CUPTI_API_VERSION. */
int tsc_cupti_version_supported(uint32_t runtime, uint32_t compiled);

#endif
