/* Configuration warnings, once per job rather than once per process
 * (issue 13 item 13).  Every process that loads the library reads the
 * configuration, so a job script's shell, its `ls`, its 50-iteration loop
 * would each repeat the same warning.  Instead a warning is held until the
 * process starts recording (the only processes the setting matters to),
 * and then printed by the first recording process of the job only: it
 * claims a marker file ".tscope-config-warned.<run id>" in the output
 * directory with O_EXCL.  When the marker cannot be made (no output
 * directory, read-only), the process warns anyway: a warning is never
 * lost to the marker. */
#ifndef TSC_CONFIG_WARN_H
#define TSC_CONFIG_WARN_H

/* A tsc_config_warn_fn: keeps the warning for tsc_config_warn_flush. */
void tsc_config_warn_defer(const char *var, const char *value, const char *used);

/* Print the kept warnings unless another process of run_id already did
 * (out_dir NULL: print them).  Called once, when recording starts. */
void tsc_config_warn_flush(const char *out_dir, const char *run_id);

#endif
