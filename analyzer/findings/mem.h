/* MEM.GROWTH, MEM.NEAR_OOM, MEM.CHURN (docs/findings.md). */
#ifndef TSA_FINDINGS_MEM_H
#define TSA_FINDINGS_MEM_H

#include "model/findings.h"
#include "model/analysis.h"
#include "model/memory.h"

/* Thresholds of the rules (docs/findings.md). */
#define TSA_MEM_NEAR_OOM_SHARE 0.90     /* peak / capacity strictly over this */
#define TSA_MEM_NEAR_OOM_WARN 0.95      /* from this share on: warning */
#define TSA_MEM_GROWTH_MIN_STEPS 4      /* analysed steps needed for a leak check */
#define TSA_MEM_GROWTH_STEPS_SHARE 0.75 /* share of step-to-step changes that grew */
#define TSA_MEM_GROWTH_MIN_BYTES (1ull << 20) /* mean growth per step at least this */
#define TSA_MEM_CHURN_STEPS_SHARE 0.5   /* share of analysed steps with churn */
#define TSA_MEM_CHURN_PEAK_SHARE 0.01   /* churn bytes per step over this share of the peak */

/* MEM.GROWTH, MEM.NEAR_OOM, MEM.CHURN (advisory: recoverable 0). */
int tsa_memory_findings(const tsa_memory *m, tsa_findings *out);

/* The same over the analysis (the rule family's entry in rules.h). */
int tsa_mem_findings(const tsa_analysis *a, tsa_findings *out);

#endif
