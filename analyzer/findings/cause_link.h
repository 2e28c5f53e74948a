/* A slow network link as the cause of a blamed rank's lateness: the rank
 * sends or receives over a link NET.SLOW_LINK names (netlink.h), and the
 * time its own proxy operations on that link took beyond what the median
 * link takes per step, over its analysis window, is what the link costs
 * it per step ("late because its receives from rank 12 are 3x slower than
 * the median link"). */
#ifndef TSA_FINDINGS_CAUSE_LINK_H
#define TSA_FINDINGS_CAUSE_LINK_H

#include <stddef.h>

#include "model/analysis.h"

/* For the rank at job index i: 1 with out's explained_ns, metric, own,
 * peers and evidence filled (kind, share and fix are the caller's), 0
 * when it is on no slow link (or the link costs it nothing measurable),
 * -1 when out of memory. */
int tsa_cause_link(const tsa_analysis *a, size_t i, tsa_cause *out);

/* Whether rank i's dump has the plugin's proxy operations (full capture),
 * which the link cause reads: 1 or 0. */
int tsa_cause_link_recorded(const tsa_analysis *a, size_t i);

#endif
