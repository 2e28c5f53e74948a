#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int tsc_parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
    if (!s)
        return -1;
    while (isspace((unsigned char)*s))
        s++;
    if (!isdigit((unsigned char)*s))
        return -1; /* strtoull would accept "-1" and wrap it */
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno == ERANGE)
        return -1;
    while (isspace((unsigned char)*end))
        end++;
    if (*end || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

int tsc_parse_bool(const char *s)
{
    if (!s)
        return -1;
    static const char *const yes[] = {"1", "true", "yes", "on"};
    static const char *const no[] = {"0", "false", "no", "off", ""};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
        if (!strcasecmp(s, yes[i]))
            return 1;
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        if (!strcasecmp(s, no[i]))
            return 0;
    return -1;
}

static int load_bool(const char *var, int def, tsc_getenv_fn get,
                     tsc_config_warn_fn warn, int *bad)
{
    const char *s = get(var);
    if (!s)
        return def;
    int v = tsc_parse_bool(s);
    if (v < 0) {
        (*bad)++;
        if (warn)
            warn(var, s, def ? "1" : "0");
        return def;
    }
    return v;
}

static uint32_t load_uint(const char *var, uint32_t def, uint32_t min, uint32_t max,
                          tsc_getenv_fn get, tsc_config_warn_fn warn, int *bad)
{
    const char *s = get(var);
    if (!s)
        return def;
    uint64_t v;
    if (tsc_parse_uint(s, min, max, &v) < 0) {
        (*bad)++;
        if (warn) {
            char used[16];
            snprintf(used, sizeof used, "%u", def);
            warn(var, s, used);
        }
        return def;
    }
    return (uint32_t)v;
}

/* A factor such as "3" or "2.5" as a percentage in [min, max]. */
static uint32_t load_factor_pct(const char *var, uint32_t def, uint32_t min, uint32_t max,
                                tsc_getenv_fn get, tsc_config_warn_fn warn, int *bad)
{
    const char *s = get(var);
    if (!s)
        return def;
    char *end;
    double v = strtod(s, &end);
    while (*end == ' ')
        end++;
    if (end == s || *end || !(v * 100 >= min && v * 100 <= max)) {
        (*bad)++;
        if (warn) {
            char used[24];
            snprintf(used, sizeof used, "%.2f", def / 100.0);
            warn(var, s, used);
        }
        return def;
    }
    return (uint32_t)(v * 100 + 0.5);
}

static void load_blackbox(tsc_config *cfg, tsc_getenv_fn get, tsc_config_warn_fn warn, int *bad)
{
    const char *mode = get("TSCOPE_MODE");
    if (mode && !strcasecmp(mode, "blackbox"))
        cfg->blackbox = 1;
    else if (mode && *mode && strcasecmp(mode, "full")) {
        (*bad)++;
        if (warn)
            warn("TSCOPE_MODE", mode, "full");
    }
    cfg->bb_steps = load_uint("TSCOPE_BB_STEPS", TSC_DEFAULT_BB_STEPS, 4, 1000000, get, warn, bad);
    cfg->bb_mb = load_uint("TSCOPE_BB_MB", TSC_DEFAULT_BB_MB, 1, 65536, get, warn, bad);
    cfg->bb_k_pct = load_factor_pct("TSCOPE_BB_K", TSC_DEFAULT_BB_K_PCT, 110, 100000, get, warn,
                                    bad);
    cfg->bb_median = load_uint("TSCOPE_BB_MEDIAN", TSC_DEFAULT_BB_MEDIAN, 5, 1000, get, warn,
                               bad);
    cfg->bb_run = load_uint("TSCOPE_BB_RUN", 1, 1, 1000, get, warn, bad);
    cfg->bb_pre = load_uint("TSCOPE_BB_PRE", TSC_DEFAULT_BB_PRE, 0, 10000, get, warn, bad);
    cfg->bb_post = load_uint("TSCOPE_BB_POST", TSC_DEFAULT_BB_POST, 0, 10000, get, warn, bad);
    cfg->bb_keep_mb = load_uint("TSCOPE_BB_KEEP_MB", TSC_DEFAULT_BB_KEEP_MB, 1, 1u << 24, get,
                                warn, bad);
    cfg->bb_keep_windows = load_uint("TSCOPE_BB_KEEP_WINDOWS", TSC_DEFAULT_BB_KEEP_WINDOWS, 1,
                                     100000, get, warn, bad);
    cfg->bb_term_ms = load_uint("TSCOPE_BB_TERM_MS", TSC_DEFAULT_BB_TERM_MS, 0, 60000, get,
                                warn, bad);
    cfg->metrics_port = load_uint("TSCOPE_METRICS_PORT", 0, 0, 65535, get, warn, bad);
}

/* A path into dst (cap bytes) that leaves `room` bytes for what is
 * appended to it; empty or too long falls back to dflt with a warning. */
static void load_path(const char *name, const char *dflt, char *dst, size_t cap, size_t room,
                      tsc_getenv_fn get, tsc_config_warn_fn warn, int *bad)
{
    const char *v = get(name);
    if (v && (!*v || strlen(v) >= cap - room)) {
        (*bad)++;
        if (warn)
            warn(name, v, dflt);
        v = NULL;
    }
    snprintf(dst, cap, "%s", v ? v : dflt);
}

int tsc_config_load(tsc_config *cfg, tsc_getenv_fn get, tsc_config_warn_fn warn)
{
    int bad = 0;
    memset(cfg, 0, sizeof *cfg);
    /* QUIET first: it decides whether the other warnings are printed. */
    cfg->quiet = load_bool("TSCOPE_QUIET", 0, get, warn, &bad);
    if (cfg->quiet)
        warn = NULL;
    cfg->disabled = load_bool("TSCOPE_DISABLE", 0, get, warn, &bad);
    cfg->buffer_kb = load_uint("TSCOPE_BUFFER_KB", TSC_DEFAULT_BUFFER_KB, TSC_MIN_BUFFER_KB,
                               TSC_MAX_BUFFER_KB, get, warn, &bad);
    cfg->max_threads = load_uint("TSCOPE_MAX_THREADS", TSC_DEFAULT_MAX_THREADS,
                                 TSC_MIN_MAX_THREADS, TSC_MAX_MAX_THREADS, get, warn, &bad);
    cfg->flush_ms = load_uint("TSCOPE_FLUSH_MS", TSC_DEFAULT_FLUSH_MS, TSC_MIN_FLUSH_MS,
                              TSC_MAX_FLUSH_MS, get, warn, &bad);
    cfg->nvml_ms = load_uint("TSCOPE_NVML_MS", TSC_DEFAULT_NVML_MS, 0, TSC_MAX_NVML_MS, get,
                             warn, &bad);
    if (cfg->nvml_ms && cfg->nvml_ms < TSC_MIN_NVML_MS)
        cfg->nvml_ms = TSC_MIN_NVML_MS; /* a faster sampler would cost the job CPU */
    cfg->os_clock = load_bool("TSCOPE_OS_CLOCK", 0, get, warn, &bad);
    cfg->hang_s = load_uint("TSCOPE_HANG_S", 0, 0, TSC_MAX_HANG_S, get, warn, &bad);
    load_blackbox(cfg, get, warn, &bad);
    cfg->budget_cpct = load_factor_pct("TSCOPE_BUDGET_PCT", cfg->blackbox
                                       ? TSC_DEFAULT_BB_BUDGET_CPCT : TSC_DEFAULT_BUDGET_CPCT,
                                       0, 10000, get, warn, &bad);
    /* Leave room for the file name that is appended later. */
    load_path("TSCOPE_OUT", TSC_DEFAULT_OUT, cfg->out_dir, sizeof cfg->out_dir, 128, get, warn,
              &bad);
    /* ... and for the paths below the sysfs root. */
    load_path("TSCOPE_SYSFS_ROOT", TSC_DEFAULT_SYSFS_ROOT, cfg->sysfs_root,
              sizeof cfg->sysfs_root, 64, get, warn, &bad);
    return bad;
}
