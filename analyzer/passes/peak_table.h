/* Peak table: dense FLOP/s for a device name and dtype. */
#ifndef TSA_PEAK_TABLE_H
#define TSA_PEAK_TABLE_H

#include "model/model.h"

/* 0 when unknown; *entry receives the matched table row name. */
double tsa_peak_flops(const char *device_name, tsa_dtype dtype, const char **entry);

#endif
