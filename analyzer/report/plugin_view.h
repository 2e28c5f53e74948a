/* The NCCL PROFILER PLUGIN section and the "nccl_plugin" JSON key: what
 * NCCL reported to tscope's plugin (passes/nprof_summary.h): its
 * collectives and how many joined their NCCL call, kernel channel times,
 * the events it could not record, PXN operations; transfer time and
 * bandwidth of each collective by peer and by channel
 * (passes/coll_transfer.h); the collectives without an NCCL call (graph
 * replays) with their steps.  The links themselves: links_text.h. */
#ifndef TSA_PLUGIN_VIEW_H
#define TSA_PLUGIN_VIEW_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "model/analysis.h"

/* Prints nothing (returns 0) when no rank has plugin records; at most
 * max_colls collectives and max_rows rows per table (--json: all). */
int tsa_plugin_print(FILE *out, const tsa_analysis *a, size_t max_colls, size_t max_rows);
/* The "nccl_plugin" object, or NULL when no rank has plugin records. */
cJSON *tsa_plugin_json(const tsa_analysis *a);

/* Plugin events not recorded, over the ranks (the confidence line). */
uint64_t tsa_plugin_lost(const tsa_job *job);

#endif
