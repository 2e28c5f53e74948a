/* Peak table: the shared table of format/tsc_peaks.h, in the analyzer's
 * dtype terms (tsa_dtype has the values of tsc_prec). */
#include "tsc_peaks.h"

#include "peak_table.h"

_Static_assert((int)TSA_DTYPE_FP32 == (int)TSC_PREC_FP32 &&
                   (int)TSA_DTYPE_TF32 == (int)TSC_PREC_TF32 &&
                   (int)TSA_DTYPE_FP16 == (int)TSC_PREC_FP16 &&
                   (int)TSA_DTYPE_BF16 == (int)TSC_PREC_BF16 &&
                   (int)TSA_DTYPE_FP8 == (int)TSC_PREC_FP8 &&
                   (int)TSA_DTYPE_FP64 == (int)TSC_PREC_FP64 &&
                   (int)TSA_DTYPE_INT8 == (int)TSC_PREC_INT8,
               "tsa_dtype and tsc_prec agree");

double tsa_peak_flops(const char *device_name, tsa_dtype dtype, const char **entry)
{
    return tsc_peak_flops(device_name, (int)dtype, entry);
}
