/* Findings about the data itself: LOAD.LOST_WRITES and LOAD.DUPLICATE_RANK;
 * both lower the report's confidence. */
#ifndef TSA_FINDINGS_DATA_H
#define TSA_FINDINGS_DATA_H

#include "model/analysis.h"

#define TSA_TH_LOST_WRITES_LOW 0.10  /* lost bytes / dump bytes: confidence low */

int tsa_data_findings(const tsa_analysis *a, tsa_findings *out);

#endif
