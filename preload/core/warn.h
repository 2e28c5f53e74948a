/* The library's voice: every line tscope prints on stderr goes through
 * here.  Its own header (not recorder.h) so that the files under the
 * recorder (configuration, metadata, own cost) can warn without naming the
 * recorder, and the recorder stays the one that calls down. */
#ifndef TSC_WARN_H
#define TSC_WARN_H

/* One line on stderr, at most once per key, prefixed "tscope: ". */
void tsc_warn_once(const char *key, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The same for a fixed line (without the prefix and newline), safe in a
 * signal handler: no formatting, one write(2). */
void tsc_warn_fixed_once(const char *key, const char *line);

/* Set from TSCOPE_QUIET before any other warning can be printed. */
void tsc_warn_set_quiet(int quiet);

/* One line on stderr, "tscope: " first, unless TSCOPE_QUIET (events the
 * user asked to hear about each time: captures written, windows dropped). */
void tsc_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
