#include "findings.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static char *vformat(const char *fmt, va_list ap)
{
    va_list copy;
    va_copy(copy, ap);
    int len = vsnprintf(NULL, 0, fmt, copy);
    va_end(copy);
    if (len < 0)
        return NULL;
    char *s = malloc((size_t)len + 1);
    if (s)
        vsnprintf(s, (size_t)len + 1, fmt, ap);
    return s;
}

tsa_finding *tsa_findings_add(tsa_findings *list, const char *id,
                              tsa_severity severity, double recoverable_s,
                              int rank, const char *fix, const char *title_fmt, ...)
{
    if (list->n == list->cap) {
        size_t cap = list->cap ? list->cap * 2 : 16;
        tsa_finding *items = realloc(list->items, cap * sizeof *items);
        if (!items)
            return NULL;
        list->items = items;
        list->cap = cap;
    }
    tsa_finding *f = &list->items[list->n];
    memset(f, 0, sizeof *f);
    va_list ap;
    va_start(ap, title_fmt);
    f->title = vformat(title_fmt, ap);
    va_end(ap);
    f->fix = strdup(fix ? fix : "");
    if (!f->title || !f->fix) {
        free(f->title);
        free(f->fix);
        return NULL;
    }
    f->id = id;
    f->severity = severity;
    f->recoverable_s = recoverable_s > 0 ? recoverable_s : 0;
    f->recoverable_ns = f->recoverable_s < 9e9 ? (int64_t)(f->recoverable_s * 1e9) : INT64_MAX;
    f->rank = rank;
    list->n++;
    return f;
}

void tsa_finding_number(tsa_finding *f, const char *name, double value)
{
    if (!f || f->n_numbers == TSA_FINDING_MAX_NUMBERS)
        return;
    f->numbers[f->n_numbers].name = name;
    f->numbers[f->n_numbers].value = value;
    f->n_numbers++;
}

void tsa_finding_evidence(tsa_finding *f, const char *fmt, ...)
{
    if (!f)
        return;
    char **grown = realloc(f->evidence, (f->n_evidence + 1) * sizeof *grown);
    if (!grown)
        return;
    f->evidence = grown;
    va_list ap;
    va_start(ap, fmt);
    char *line = vformat(fmt, ap);
    va_end(ap);
    if (line)
        f->evidence[f->n_evidence++] = line;
}

void tsa_finding_clear(tsa_finding *f)
{
    free(f->title);
    free(f->fix);
    for (size_t i = 0; i < f->n_evidence; i++)
        free(f->evidence[i]);
    free(f->evidence);
    f->title = f->fix = NULL;
    f->evidence = NULL;
    f->n_evidence = 0;
}

static int by_recoverable(const void *pa, const void *pb)
{
    const tsa_finding *a = pa, *b = pb;
    if (a->recoverable_s != b->recoverable_s)
        return a->recoverable_s < b->recoverable_s ? 1 : -1;
    if (a->severity != b->severity)
        return a->severity < b->severity ? 1 : -1;
    int c = strcmp(a->id, b->id);
    if (c)
        return c;
    return (a->rank > b->rank) - (a->rank < b->rank);
}

void tsa_findings_sort(tsa_findings *list)
{
    if (list->n > 1)
        qsort(list->items, list->n, sizeof list->items[0], by_recoverable);
}

const char *tsa_confidence_name(tsa_confidence c)
{
    switch (c) {
    case TSA_CONF_LOW: return "low";
    case TSA_CONF_MEDIUM: return "medium";
    default: return "high";
    }
}

const char *tsa_severity_name(tsa_severity s)
{
    switch (s) {
    case TSA_SEV_CRITICAL: return "critical";
    case TSA_SEV_WARNING: return "warning";
    default: return "info";
    }
}

tsa_confidence tsa_findings_confidence(const tsa_findings *list)
{
    tsa_confidence c = TSA_CONF_HIGH;
    for (size_t i = 0; i < list->n; i++)
        if (list->items[i].confidence_cap > c)
            c = list->items[i].confidence_cap;
    return c;
}

void tsa_findings_free(tsa_findings *list)
{
    for (size_t i = 0; i < list->n; i++)
        tsa_finding_clear(&list->items[i]);
    free(list->items);
    memset(list, 0, sizeof *list);
}
