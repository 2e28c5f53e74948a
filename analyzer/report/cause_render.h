/* The cause blocks (model/cause.h): a text section and a JSON key. */
#ifndef TSA_CAUSE_RENDER_H
#define TSA_CAUSE_RENDER_H

#include <stdio.h>

#include "model/cause.h"

/* One block per blamed rank or host: its extra work per step, the ranked
 * causes with their evidence and the fix, or "cause unknown" and what was
 * checked. */
void tsa_cause_print(FILE *out, const tsa_cause_result *r);

/* Adds "causes": [{rank, host, blamed_as, step_ns, peer_step_ns, extra_ns,
 * peers, unknown, checked, causes: [{kind, explained_ns, share, metric,
 * own, peers, evidence, fix}]}] to a report's JSON object (a cJSON *). */
void tsa_cause_add_json(void *cjson_root, const tsa_cause_result *r);

#endif
