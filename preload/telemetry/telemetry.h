/* The telemetry sampler thread: NVML and host samples every
 * TSCOPE_NVML_MS (docs/configuration.md, docs/format.md).  Started by the
 * recorder's set-up, so only in processes that record (never in a launcher
 * or a DataLoader worker); stopped, bounded, at exit; absent in a forked
 * child, which starts its own if it records. */
#ifndef TSC_TELEMETRY_H
#define TSC_TELEMETRY_H

void tsc_telemetry_start(void);
void tsc_telemetry_stop(void);

/* The part's table for the core (core/parts.h): start once the recorder
 * is active, stop at exit, forget the thread in a forked child. */
struct tsc_part;
extern const struct tsc_part tsc_telemetry_part;

#endif
