/* The NETWORK LINKS section and the "links" JSON key: per link (sender ->
 * receiver, channel) from the NCCL profiler plugin's proxy records, time
 * on the wire per step and bandwidth (findings/netlink.h). */
#ifndef TSA_LINKS_TEXT_H
#define TSA_LINKS_TEXT_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "model/analysis.h"

/* 1 when some rank has proxy records (the section is printed). */
int tsa_links_any(const tsa_analysis *a);
/* Prints nothing (returns 0) when no rank has proxy records; max_lines
 * slowest links first. */
int tsa_links_print(FILE *out, const tsa_analysis *a, size_t max_lines);
/* The "links" array, or NULL when there are no proxy records. */
cJSON *tsa_links_json(const tsa_analysis *a);

#endif
