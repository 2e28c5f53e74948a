/* Why the GPU was idle: each idle nanosecond of a rank's window is put to
 * one thing the host was doing then (model.h tsa_host_span), so a verdict
 * can name the cause and a fix that fits it.  Causes in the order they win
 * where host spans overlap: waiting for data, synchronising, blocking
 * allocator calls, CPU operators; launch calls and the GPU idle at a
 * step's start come from the rank pass itself; the rest is idle while
 * nothing was traced on the host. */
#ifndef TSA_IDLE_CAUSE_H
#define TSA_IDLE_CAUSE_H

#include "model/analysis.h"
#include "util/interval_set.h"

/* Splits `rest` (normalised GPU idle not yet explained) by the rank's host
 * spans of kinds first..last: out[k] receives rest ∩ spans of kind k,
 * minus what an earlier kind took; `rest` keeps what no span covers.
 * out[] must be initialised sets.  -1 on OOM. */
int tsa_idle_split(const tsa_rank *r, tsa_ivset *rest, int first, int last,
                   tsa_ivset out[TSA_HOST_KINDS]);

/* Host-only input: the part of [w0, w1) outside `comm` that the host spent
 * waiting for its DataLoader (on any thread), into out.  -1 on OOM. */
int tsa_host_data_wait(const tsa_rank *r, int64_t w0, int64_t w1, const tsa_ivset *comm,
                       tsa_ivset *out);

/* "data loading", "synchronisation", ... (JSON: tsa_idle_cause_key). */
const char *tsa_idle_cause_label(tsa_idle_cause c);
const char *tsa_idle_cause_key(tsa_idle_cause c);

#endif
