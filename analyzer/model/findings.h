/* Findings: what every analysis pass concludes, in one shape, so the report
 * can rank them by the time they could win back.  docs/findings.md explains
 * each id. */
#ifndef TSA_FINDINGS_H
#define TSA_FINDINGS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum tsa_severity {
    TSA_SEV_INFO = 0,
    TSA_SEV_WARNING = 1,
    TSA_SEV_CRITICAL = 2,
} tsa_severity;

#define TSA_FINDING_MAX_NUMBERS 8

/* How far the report can be trusted.  A finding about the data itself
 * (lost writes, dropped records, duplicate ranks) caps it; the report's
 * confidence is the lowest cap of its findings (docs/report.md). */
typedef enum tsa_confidence {
    TSA_CONF_HIGH = 0,
    TSA_CONF_MEDIUM = 1,     /* some data is missing: totals may be low */
    TSA_CONF_LOW = 2,        /* much is missing or contradictory: read with care */
} tsa_confidence;

const char *tsa_confidence_name(tsa_confidence c); /* "high", "medium", "low" */

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
    /* --- appended: recoverable attribution and confidence --- */
    /* Set by the attribution pass (analyzer/findings/attribution.h): this
     * finding's disjoint share of the job wall, in ns per rank; the job's
     * findings sum to at most the wall.  recoverable_s is then this / 1e9.
     * Before that pass, recoverable_s is what the rule asks for. */
    int64_t recoverable_ns;
    /* Budget lines (bit 1u << tsa_budget_line) the time lives in, for rules
     * the attribution pass does not know by id; 0: any recoverable line. */
    uint32_t pools;
    tsa_confidence confidence_cap;  /* TSA_CONF_HIGH: no effect */
    /* --- appended: what the rule read from the records and used, one
     * line each (JSON "evidence"; docs/findings.md says per rule what it
     * needs).  Filled by the rule with tsa_finding_evidence. --- */
    char **evidence;
    size_t n_evidence;
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

/* One line of the finding's evidence: what was recorded and used (a
 * printf-formatted copy).  Out of memory the line is left out. */
void tsa_finding_evidence(tsa_finding *f, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Frees what a finding owns (title, fix, evidence); the list keeps its slot. */
void tsa_finding_clear(tsa_finding *f);

/* Most recoverable seconds first; ties by severity, then id. */
void tsa_findings_sort(tsa_findings *list);

const char *tsa_severity_name(tsa_severity s);

/* The report's confidence: the lowest confidence_cap over the list. */
tsa_confidence tsa_findings_confidence(const tsa_findings *list);

void tsa_findings_free(tsa_findings *list);

#endif
