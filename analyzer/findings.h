/* Findings: what every analysis pass concludes, in one shape, so the report
 * can rank them by the time they could win back.  docs/findings.md explains
 * each id. */
#ifndef TSA_FINDINGS_H
#define TSA_FINDINGS_H

#include <stddef.h>
#include <stdio.h>

typedef enum tsa_severity {
    TSA_SEV_INFO = 0,
    TSA_SEV_WARNING = 1,
    TSA_SEV_CRITICAL = 2,
} tsa_severity;

#define TSA_FINDING_MAX_NUMBERS 8

/* A named number behind a finding, e.g. {"exposed_share", 0.31}. */
typedef struct tsa_number {
    const char *name;   /* static string */
    double value;
} tsa_number;

typedef struct tsa_finding {
    const char *id;       /* stable id, static string, e.g. "DIST.STRAGGLER" */
    tsa_severity severity;
    double recoverable_s; /* seconds of job wall time it could win back */
    int rank;             /* rank concerned, -1 for the job */
    char *title;          /* one line: what was found, with the key number and the
                           * rank or host concerned (renderers add nothing) */
    char *fix;            /* the fix to try first */
    tsa_number numbers[TSA_FINDING_MAX_NUMBERS];
    size_t n_numbers;
} tsa_finding;

typedef struct tsa_findings {
    tsa_finding *items;
    size_t n, cap;
} tsa_findings;

/* Add a finding; title and fix are printf-formatted copies.  Returns the
 * finding so the caller can attach numbers, or NULL when out of memory. */
tsa_finding *tsa_findings_add(tsa_findings *list, const char *id,
                              tsa_severity severity, double recoverable_s,
                              int rank, const char *fix, const char *title_fmt, ...)
    __attribute__((format(printf, 7, 8)));

void tsa_finding_number(tsa_finding *f, const char *name, double value);

/* Most recoverable seconds first; ties by severity, then id. */
void tsa_findings_sort(tsa_findings *list);

const char *tsa_severity_name(tsa_severity s);

void tsa_findings_free(tsa_findings *list);

#endif
