/* GEMM precision and dense peak FLOP/s per GPU, shared by the analyzer
 * (the report's MFU) and the preload (black-box mode's MFU estimate), so
 * the two never disagree about a device.
 *
 * Peaks are dense (non-sparse) figures from the vendors' datasheets;
 * docs/report.md cites the source of every row.  Rows are matched by
 * substring of the device name, first match wins, so the more specific
 * names come first ("GB200" before "B200", "A100" before "A10", "L40S"
 * before "L4", "H100 PCIe" before "H100"). */
#ifndef TSC_PEAKS_H
#define TSC_PEAKS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* A GEMM's precision.  The analyzer's tsa_dtype has the same values. */
enum tsc_prec {
    TSC_PREC_UNKNOWN = 0,
    TSC_PREC_FP32,
    TSC_PREC_TF32,
    TSC_PREC_FP16,
    TSC_PREC_BF16,
    TSC_PREC_FP8,
    TSC_PREC_FP64,
    TSC_PREC_INT8,
    TSC_PREC_COUNT
};

/* cudaDataType_t / cublasComputeType_t values (library_types.h,
 * cublas_api.h) that decide the precision. */
enum {
    TSC_CUDA_R_32F = 0, TSC_CUDA_R_64F = 1, TSC_CUDA_R_16F = 2, TSC_CUDA_R_8I = 3,
    TSC_CUDA_R_16BF = 14, TSC_CUDA_R_8F_E4M3 = 28, TSC_CUDA_R_8F_E5M2 = 29,
    TSC_COMPUTE_32F_FAST_16F = 74, TSC_COMPUTE_32F_FAST_16BF = 75,
    TSC_COMPUTE_32F_FAST_TF32 = 77,
};

/* The precision of a GEMM from its A type and compute type
 * (tsc_desc_gemm.a_type, .compute_type). */
static inline enum tsc_prec tsc_gemm_precision(uint32_t a_type, uint32_t compute_type)
{
    switch (a_type) {
    case TSC_CUDA_R_16F: return TSC_PREC_FP16;
    case TSC_CUDA_R_16BF: return TSC_PREC_BF16;
    case TSC_CUDA_R_8F_E4M3: case TSC_CUDA_R_8F_E5M2: return TSC_PREC_FP8;
    case TSC_CUDA_R_64F: return TSC_PREC_FP64;
    case TSC_CUDA_R_8I: return TSC_PREC_INT8;
    case TSC_CUDA_R_32F:
        if (compute_type == TSC_COMPUTE_32F_FAST_TF32)
            return TSC_PREC_TF32;
        if (compute_type == TSC_COMPUTE_32F_FAST_16BF)
            return TSC_PREC_BF16;
        if (compute_type == TSC_COMPUTE_32F_FAST_16F)
            return TSC_PREC_FP16;
        return TSC_PREC_FP32;
    default: return TSC_PREC_UNKNOWN;
    }
}

typedef struct tsc_peak_row {
    const char *match;   /* substring of the CUDA device name */
    const char *entry;   /* name shown in reports */
    /* TFLOP/s by precision: unknown, fp32, tf32, fp16, bf16, fp8 (0 = n/a) */
    double tf[6];
} tsc_peak_row;

static const tsc_peak_row tsc_peak_rows[] = {
    {"GB200", "GB200 (per GPU)", {0, 80, 1250, 2500, 2500, 5000}},
    {"B200", "B200", {0, 75, 1125, 2250, 2250, 4500}},
    {"H200", "H200 SXM", {0, 67, 494.5, 989.5, 989.5, 1979}},
    {"H100 PCIe", "H100 PCIe", {0, 51, 378, 756.5, 756.5, 1513}},
    {"H100", "H100 SXM", {0, 67, 494.5, 989.5, 989.5, 1979}},
    /* H800: H100 compute with less NVLink and FP64 */
    {"H800 PCIe", "H800 PCIe", {0, 51, 378, 756.5, 756.5, 1513}},
    {"H800", "H800 SXM", {0, 67, 494.5, 989.5, 989.5, 1979}},
    {"H20", "H20", {0, 44, 74, 148, 148, 296}},
    {"A100", "A100", {0, 19.5, 156, 312, 312, 0}},
    {"A10", "A10", {0, 31.2, 62.5, 125, 125, 0}},
    {"A40", "A40", {0, 37.4, 74.8, 149.7, 149.7, 0}},
    {"L40S", "L40S", {0, 91.6, 183, 362.05, 362.05, 733}},
    {"L40", "L40", {0, 90.5, 90.5, 181, 181, 362}},
    {"L4", "L4", {0, 30.3, 60, 121, 121, 242.5}},
    /* Ada and consumer Ampere; GeForce tensor rates with fp32 accumulate */
    {"RTX 6000 Ada", "RTX 6000 Ada", {0, 91.1, 182.1, 364.2, 364.2, 728.5}},
    {"RTX 4090", "RTX 4090", {0, 82.6, 82.6, 165.2, 165.2, 330.3}},
    {"RTX A6000", "RTX A6000", {0, 38.7, 77.4, 154.8, 154.8, 0}},
    {"RTX 3090", "RTX 3090", {0, 35.6, 35.6, 71, 71, 0}},
    {"RTX 3080", "RTX 3080", {0, 29.8, 29.8, 59.5, 59.5, 0}},
    /* Turing: fp16 tensor cores only, no TF32 or bf16 */
    {"T4", "T4", {0, 8.1, 0, 65, 0, 0}},
    {"RTX 2080 Ti", "RTX 2080 Ti", {0, 13.4, 0, 53.8, 0, 0}},
    {"TITAN RTX", "TITAN RTX", {0, 16.3, 0, 130.5, 0, 0}},
    {"Quadro RTX", "Quadro RTX 6000/8000", {0, 16.3, 0, 130.5, 0, 0}},
    {"V100", "V100 SXM2", {0, 15.7, 0, 125, 0, 0}},
    {"MI355X", "MI355X", {0, 157.3, 0, 2516.6, 2516.6, 5033.2}},
    {"MI325X", "MI325X", {0, 163.4, 653.7, 1307.4, 1307.4, 2614.9}},
    {"MI300X", "MI300X", {0, 163.4, 653.7, 1307.4, 1307.4, 2614.9}},
    {"MI250X", "MI250X", {0, 95.7, 0, 383, 383, 0}},
    {"MI250", "MI250", {0, 90.5, 0, 362.1, 362.1, 0}},
    {"MI210", "MI210", {0, 45.3, 0, 181, 181, 0}},
};

/* Dense peak FLOP/s of device_name at precision prec; 0 when unknown.
 * *entry (when not NULL) receives the matched row's name, or "unknown".
 * An unknown precision counts as bf16, the common training dtype, or fp16
 * on a GPU without bf16 tensor cores (V100, Turing). */
static inline double tsc_peak_flops(const char *device_name, int prec, const char **entry)
{
    if (entry)
        *entry = "unknown";
    if (!device_name)
        return 0;
    int col = prec == TSC_PREC_UNKNOWN ? TSC_PREC_BF16 : prec;
    if (col < 0 || col > TSC_PREC_FP8)
        return 0;
    for (size_t i = 0; i < sizeof tsc_peak_rows / sizeof tsc_peak_rows[0]; i++)
        if (strstr(device_name, tsc_peak_rows[i].match)) {
            if (entry)
                *entry = tsc_peak_rows[i].entry;
            if (prec == TSC_PREC_UNKNOWN && !tsc_peak_rows[i].tf[col])
                col = TSC_PREC_FP16;
            return tsc_peak_rows[i].tf[col] * 1e12;
        }
    return 0;
}

#endif
