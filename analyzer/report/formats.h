/* The report's output formats, one line each, and the table built from
 * them.  A format NAME has its option --NAME (the first line is the
 * default and has none), a WHAT for messages, a HELP line for --help, and
 * a writer
 *     int tsa_report_write_NAME(FILE *out, const tsa_analysis *a, int color);
 * returning 0, or -1 when out of memory.  Adding a format: the writer's
 * file, one line here, one line in meson.build (docs/architecture.md). */
#ifndef TSA_REPORT_FORMATS_H
#define TSA_REPORT_FORMATS_H

#include <stddef.h>
#include <stdio.h>

#include "model/analysis.h"

#define TSA_REPORT_FORMATS(X)                                               \
    X(text, "the text report", "the terminal report (default)")             \
    X(json, "JSON", "machine-readable report (docs/report.md)")                 \
    X(html, "HTML", "one self-contained HTML page with charts (docs/html.md)")

#define TSA_REPORT_FORMAT_DECL(name, what, help) \
    int tsa_report_write_##name(FILE *out, const tsa_analysis *a, int color);
TSA_REPORT_FORMATS(TSA_REPORT_FORMAT_DECL)
#undef TSA_REPORT_FORMAT_DECL

typedef struct tsa_report_format {
    const char *name;       /* the option without "--" */
    const char *what;       /* "JSON": "out of memory writing JSON" */
    const char *help;
    int (*write)(FILE *out, const tsa_analysis *a, int color);
} tsa_report_format;

extern const tsa_report_format tsa_report_formats[];
extern const size_t tsa_report_n_formats;

#endif
