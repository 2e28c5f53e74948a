/* Dense (non-sparse) peak FLOP/s per GPU from the vendors' datasheets;
 * docs/report.md cites the source of every row.  Rows are matched by
 * substring of the device name, first match wins, so the more specific
 * names come first ("GB200" before "B200", "A100" before "A10", "L40S"
 * before "L4", "H100 PCIe" before "H100"). */
#include <string.h>

#include "peak_table.h"

typedef struct peak_row {
    const char *match;   /* substring of the CUDA device name */
    const char *entry;   /* name shown in the report */
    /* TFLOP/s by tsa_dtype: unknown, fp32, tf32, fp16, bf16, fp8 (0 = n/a) */
    double tf[6];
} peak_row;

static const peak_row rows[] = {
    {"GB200", "GB200 (per GPU)", {0, 80, 1250, 2500, 2500, 5000}},
    {"B200", "B200", {0, 75, 1125, 2250, 2250, 4500}},
    {"H200", "H200 SXM", {0, 67, 494.5, 989.5, 989.5, 1979}},
    {"H100 PCIe", "H100 PCIe", {0, 51, 378, 756.5, 756.5, 1513}},
    {"H100", "H100 SXM", {0, 67, 494.5, 989.5, 989.5, 1979}},
    {"A100", "A100", {0, 19.5, 156, 312, 312, 0}},
    {"A10", "A10", {0, 31.2, 62.5, 125, 125, 0}},
    {"L40S", "L40S", {0, 91.6, 183, 362.05, 362.05, 733}},
    {"L4", "L4", {0, 30.3, 60, 121, 121, 242.5}},
    {"T4", "T4", {0, 8.1, 0, 65, 0, 0}},
    {"V100", "V100 SXM2", {0, 15.7, 0, 125, 0, 0}},
    {"MI300X", "MI300X", {0, 163.4, 653.7, 1307.4, 1307.4, 2614.9}},
};

double tsa_peak_flops(const char *device_name, tsa_dtype dtype, const char **entry)
{
    if (entry)
        *entry = "unknown";
    if (!device_name)
        return 0;
    /* Without a known GEMM precision assume bf16, the common training dtype. */
    int col = dtype == TSA_DTYPE_UNKNOWN ? TSA_DTYPE_BF16 : (int)dtype;
    if (col > TSA_DTYPE_FP8)
        return 0;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (strstr(device_name, rows[i].match)) {
            if (entry)
                *entry = rows[i].entry;
            return rows[i].tf[col] * 1e12;
        }
    return 0;
}
