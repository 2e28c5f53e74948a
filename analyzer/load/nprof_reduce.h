/* A rank's plugin records reduced to its lean part (nprof_lean.h), and
 * the one way the job-level passes read a rank's part. */
#ifndef TSA_LOAD_NPROF_REDUCE_H
#define TSA_LOAD_NPROF_REDUCE_H

#include "model/model.h"
#include "nprof_lean.h"

/* parts (TSA_NPL_*) of r's lean part, made from its records (r whole;
 * its calls decoded if compact); out zeroed first.  0, or -1 when out of
 * memory. */
int tsa_np_lean_make(const tsa_rank *r, unsigned parts, tsa_np_lean *out);

/* r's: the one a lean rank keeps, else made into *tmp (parts of it).
 * NULL when r has no plugin records or memory runs out; either way free
 * tmp with tsa_np_lean_free. */
const tsa_np_lean *tsa_rank_np_lean(const tsa_rank *r, unsigned parts, tsa_np_lean *tmp);

/* r's proxy ops recorded (0 without plugin records), lean or whole. */
size_t tsa_np_proxy_count(const tsa_rank *r);

/* The q-quantile of v[0..n) (sorted here): the element at q (n - 1),
 * rounded; -1 when empty.  The summary's and the replays' figure. */
double tsa_np_quantile(double *v, size_t n, double q);

#endif
