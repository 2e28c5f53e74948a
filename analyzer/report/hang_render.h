/* The hang part of the report (text view, JSON fields of its findings) and
 * of `tscope-report hang`. */
#ifndef TSA_HANG_RENDER_H
#define TSA_HANG_RENDER_H

#include <stdio.h>

#include "hang/hang.h"

struct cJSON;

/* The hang view: nothing when there is no item (unless always). */
void tsa_hang_print_text(FILE *out, const tsa_hang_result *h, int always);
/* The JSON fields of finding f (op, comm, seq, missing_ranks, stuck_ranks,
 * exited_ranks, ...) when it is one of h's; else nothing. */
void tsa_hang_add_json(struct cJSON *finding, const tsa_hang_result *h, const tsa_finding *f);

#endif
