/* Configuration from the environment, read once by the library
 * constructor.  Parsing is defensive: a value that does not parse or is out
 * of range falls back to the default and produces one warning, because a
 * typo in a job script must never take a training run down. */
#ifndef TSC_CONFIG_H
#define TSC_CONFIG_H

#include <stdint.h>

#define TSC_DEFAULT_OUT "./tscope_out"
#define TSC_DEFAULT_SYSFS_ROOT "/sys"
#define TSC_DEFAULT_BUFFER_KB 1024u
#define TSC_DEFAULT_MAX_THREADS 256u
#define TSC_DEFAULT_FLUSH_MS 1000u
#define TSC_DEFAULT_NVML_MS 100u   /* telemetry sampler period; 0 = no sampler */
#define TSC_MIN_NVML_MS 10u        /* 1..9 are raised to this */
#define TSC_MAX_NVML_MS 3600000u

/* Bounds: a per-thread ring must fit one chunk (64 MiB payload). */
#define TSC_MIN_BUFFER_KB 4u
#define TSC_MAX_BUFFER_KB 65536u
#define TSC_MIN_MAX_THREADS 1u
#define TSC_MAX_MAX_THREADS 65536u
#define TSC_MIN_FLUSH_MS 10u
#define TSC_MAX_FLUSH_MS 3600000u
#define TSC_MAX_HANG_S 604800u   /* a week */
#define TSC_DEFAULT_BB_STEPS 1024u
#define TSC_DEFAULT_BB_MB 64u
#define TSC_DEFAULT_BB_K_PCT 300u
#define TSC_DEFAULT_BB_MEDIAN 50u
#define TSC_DEFAULT_BB_PRE 4u
#define TSC_DEFAULT_BB_POST 2u
#define TSC_DEFAULT_BB_KEEP_MB 1024u
#define TSC_DEFAULT_BB_KEEP_WINDOWS 16u
#define TSC_DEFAULT_BB_TERM_MS 2000u
#define TSC_DEFAULT_BUDGET_CPCT 100u     /* 1% */
#define TSC_DEFAULT_BB_BUDGET_CPCT 50u   /* 0.5% */

typedef struct tsc_config {
    int disabled;          /* TSCOPE_DISABLE */
    int quiet;             /* TSCOPE_QUIET */
    uint32_t buffer_kb;    /* TSCOPE_BUFFER_KB, per thread */
    uint32_t max_threads;  /* TSCOPE_MAX_THREADS */
    uint32_t flush_ms;     /* TSCOPE_FLUSH_MS */
    uint32_t hang_s;       /* TSCOPE_HANG_S: hang watchdog, 0 = off */
    char out_dir[4096];    /* TSCOPE_OUT */
    uint32_t nvml_ms;      /* TSCOPE_NVML_MS: telemetry period, 0 = no sampler */
    int os_clock;          /* TSCOPE_OS_CLOCK: clock_gettime for every timestamp */
    /* Black-box mode (docs/blackbox.md): full records only in RAM, per-step
     * summaries on disk, windows written on triggers. */
    int blackbox;          /* TSCOPE_MODE=blackbox (default: "full") */
    uint32_t bb_steps;     /* TSCOPE_BB_STEPS: steps kept in RAM */
    uint32_t bb_mb;        /* TSCOPE_BB_MB: RAM for kept records, per rank */
    uint32_t bb_k_pct;     /* TSCOPE_BB_K: anomaly factor, in percent (300 = 3x) */
    uint32_t bb_median;    /* TSCOPE_BB_MEDIAN: steps in the rolling median */
    uint32_t bb_run;       /* TSCOPE_BB_RUN: consecutive slow steps that make an anomaly */
    uint32_t bb_pre, bb_post; /* TSCOPE_BB_PRE / _POST: steps around a trigger */
    uint32_t bb_keep_mb;   /* TSCOPE_BB_KEEP_MB: disk for windows, per rank */
    uint32_t bb_keep_windows; /* TSCOPE_BB_KEEP_WINDOWS */
    uint32_t bb_term_ms;   /* TSCOPE_BB_TERM_MS: most a SIGTERM waits for its window, 0 = none */
    uint32_t metrics_port; /* TSCOPE_METRICS_PORT: HTTP /metrics on loopback, 0 = off */
    uint32_t budget_cpct;  /* TSCOPE_BUDGET_PCT in hundredths of a percent, 0 = none
                            * (default 1% full mode, 0.5% black-box mode) */
    char sysfs_root[512];  /* TSCOPE_SYSFS_ROOT: where the sampler finds sysfs (the
                            * cgroup files under fs/cgroup, network ports under
                            * class/infiniband); tests point it at a fake tree */
} tsc_config;

typedef const char *(*tsc_getenv_fn)(const char *name);
/* Called once per bad variable with the variable, its value and what is
 * used instead. */
typedef void (*tsc_config_warn_fn)(const char *var, const char *value,
                                   const char *used);

/* Fills cfg from get() (getenv in the library, a table in tests).
 * Returns the number of variables that were rejected. */
int tsc_config_load(tsc_config *cfg, tsc_getenv_fn get, tsc_config_warn_fn warn);

/* Decimal unsigned integer in [min, max], surrounding blanks allowed.
 * Returns 0 and sets *out, or -1. */
int tsc_parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/* 1/0 for true/yes/on/1 and false/no/off/0 (any case); -1 otherwise. */
int tsc_parse_bool(const char *s);

#endif
