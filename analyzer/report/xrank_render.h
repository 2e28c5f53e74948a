/* The cross-rank section of the report: text and JSON. */
#ifndef TSA_XRANK_RENDER_H
#define TSA_XRANK_RENDER_H

#include <stdio.h>

#include "model/xrank.h"

/* Terminal section: per rank compute, wait, blame, last-arrival share,
 * offset; the straggler marked.  color: 1 to use ANSI colors. */
void tsa_xrank_print(FILE *out, const tsa_xrank_result *r, int color);

/* Adds to a report's JSON object (a cJSON *, typed void * so this header
 * needs no cJSON):
 *   "straggler":   null | {rank, host, z, slowdown, wall_lost_ns,
 *                   whatif_saved_ns, whatif_step_saved_ns, intermittent,
 *                   slow_steps:[...]}
 *   "imbalance":   null | {ranks:[...], slowdown, whatif_saved_ns}
 *   "slow_host":   null | {host, ranks:[...], slowdown, whatif_saved_ns}
 *   "intermittent":[{rank, host, z, whatif_saved_ns, slow_steps:[...]}]
 *   "clock":       {reference_rank, residual_ns, samples, unaligned, hosts_split,
 *                   offsets:[{rank, host, offset_ns, aligned}]}
 *   "ranks_blame": [{rank, host, collectives, arrived_last,
 *                   arrived_last_share, wait_ns, transfer_ns, blame_ns,
 *                   wall_lost_ns, compute_median_ns, compute_rel_median,
 *                   slowdown, steps, steps_last, z, slow}]
 *   "crossrank":   {instances, steps, step_source, noise, job_wall_ns} */
void tsa_xrank_add_json(void *cjson_root, const tsa_xrank_result *r);

#endif
