/* GEMM precision and dense peak FLOP/s per GPU, shared by the analyzer
 * (the report's MFU) and the preload (black-box mode's MFU estimate), so
 * the two never disagree about a device.
 *
 * Peaks are dense (non-sparse) figures from the vendors' datasheets;
 * docs/report.md cites the source of every row.  A row names one exact
 * model: the device name is reduced to its model words (vendor and brand
 * words, memory sizes and "VF" dropped: "NVIDIA H100 80GB HBM3" -> "H100
 * HBM3", "Tesla V100-SXM2-32GB" -> "V100 SXM2") and compared whole with
 * the row's key, so "RTX A4000" is not an "A40", "H100 NVL" is not an
 * "H100 SXM" and "A10G" is not an "A10".  A key ending in " *" also takes
 * any further words, for a model whose datasheet gives the same figures
 * for every board (A100 SXM4 and PCIe).  A name no row matches has an
 * unknown peak, never a neighbour's. */
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
    const char *key;     /* the model words, upper case (see above) */
    const char *entry;   /* name shown in reports */
    /* TFLOP/s by precision: unknown, fp32, tf32, fp16, bf16, fp8 (0 = n/a) */
    double tf[6];
} tsc_peak_row;

static const tsc_peak_row tsc_peak_rows[] = {
    {"GB200", "GB200 (per GPU)", {0, 80, 1250, 2500, 2500, 5000}},
    {"B200", "B200", {0, 75, 1125, 2250, 2250, 4500}},
    {"H200", "H200 SXM", {0, 67, 494.5, 989.5, 989.5, 1979}},
    {"H200 HBM3E", "H200 SXM", {0, 67, 494.5, 989.5, 989.5, 1979}},
    {"H200 NVL", "H200 NVL", {0, 60, 417.5, 835.5, 835.5, 1670.5}},
    {"H100 HBM3", "H100 SXM", {0, 67, 494.5, 989.5, 989.5, 1979}},
    {"H100 SXM5", "H100 SXM", {0, 67, 494.5, 989.5, 989.5, 1979}},
    {"H100 PCIE", "H100 PCIe", {0, 51, 378, 756.5, 756.5, 1513}},
    {"H100 NVL", "H100 NVL", {0, 60, 417.5, 835.5, 835.5, 1670.5}},
    /* H800: H100 compute with less NVLink and FP64 */
    {"H800", "H800 SXM", {0, 67, 494.5, 989.5, 989.5, 1979}},
    {"H800 HBM3", "H800 SXM", {0, 67, 494.5, 989.5, 989.5, 1979}},
    {"H800 PCIE", "H800 PCIe", {0, 51, 378, 756.5, 756.5, 1513}},
    {"H20", "H20", {0, 44, 74, 148, 148, 296}},
    {"A100 *", "A100", {0, 19.5, 156, 312, 312, 0}},
    {"A10", "A10", {0, 31.2, 62.5, 125, 125, 0}},
    {"A40", "A40", {0, 37.4, 74.8, 149.7, 149.7, 0}},
    {"L40S", "L40S", {0, 91.6, 183, 362.05, 362.05, 733}},
    {"L40", "L40", {0, 90.5, 90.5, 181, 181, 362}},
    {"L4", "L4", {0, 30.3, 60, 121, 121, 242.5}},
    /* Ada and Ampere workstation and consumer GPUs; GeForce tensor rates
     * with fp32 accumulate */
    {"RTX 6000 ADA *", "RTX 6000 Ada", {0, 91.1, 182.1, 364.2, 364.2, 728.5}},
    {"RTX 4090", "RTX 4090", {0, 82.6, 82.6, 165.2, 165.2, 330.3}},
    {"RTX A6000", "RTX A6000", {0, 38.7, 77.4, 154.8, 154.8, 0}},
    {"RTX A4000", "RTX A4000", {0, 19.2, 38.35, 76.7, 76.7, 0}},
    {"RTX 3090", "RTX 3090", {0, 35.6, 35.6, 71, 71, 0}},
    {"RTX 3080", "RTX 3080", {0, 29.8, 29.8, 59.5, 59.5, 0}},
    /* Turing: fp16 tensor cores only, no TF32 or bf16 */
    {"T4", "T4", {0, 8.1, 0, 65, 0, 0}},
    {"RTX 2080 TI", "RTX 2080 Ti", {0, 13.4, 0, 53.8, 0, 0}},
    {"TITAN RTX", "TITAN RTX", {0, 16.3, 0, 130.5, 0, 0}},
    {"QUADRO RTX 6000", "Quadro RTX 6000", {0, 16.3, 0, 130.5, 0, 0}},
    {"QUADRO RTX 8000", "Quadro RTX 8000", {0, 16.3, 0, 130.5, 0, 0}},
    {"V100 SXM2", "V100 SXM2", {0, 15.7, 0, 125, 0, 0}},
    {"V100 PCIE", "V100 PCIe", {0, 14, 0, 112, 0, 0}},
    {"MI355X", "MI355X", {0, 157.3, 0, 2516.6, 2516.6, 5033.2}},
    {"MI325X", "MI325X", {0, 163.4, 653.7, 1307.4, 1307.4, 2614.9}},
    {"MI300X", "MI300X", {0, 163.4, 653.7, 1307.4, 1307.4, 2614.9}},
    {"MI250X", "MI250X", {0, 95.7, 0, 383, 383, 0}},
    {"MI250", "MI250", {0, 90.5, 0, 362.1, 362.1, 0}},
    {"MI210", "MI210", {0, 45.3, 0, 181, 181, 0}},
};

/* Words of a device name that do not tell the model apart. */
static inline int tsc_peak_word_ignored(const char *w, size_t n)
{
    static const char *const brand[] = {"NVIDIA", "GEFORCE", "TESLA", "AMD", "INSTINCT", "VF",
                                        NULL};
    for (const char *const *b = brand; *b; b++)
        if (strlen(*b) == n && !strncmp(w, *b, n))
            return 1;
    /* a memory size: digits then GB ("80GB") */
    size_t d = 0;
    while (d < n && w[d] >= '0' && w[d] <= '9')
        d++;
    return d > 0 && n == d + 2 && w[d] == 'G' && w[d + 1] == 'B';
}

/* The model words of a device name, upper case, one space apart, into
 * out (size cap); "" when nothing is left or it does not fit. */
static inline void tsc_peak_model_key(const char *name, char *out, size_t cap)
{
    size_t o = 0;
    out[0] = 0;
    for (const char *p = name; *p;) {
        while (*p == ' ' || *p == '-' || *p == '_')
            p++;
        char w[64];
        size_t n = 0;
        while (*p && *p != ' ' && *p != '-' && *p != '_') {
            if (n + 1 < sizeof w)
                w[n++] = (char)(*p >= 'a' && *p <= 'z' ? *p - 'a' + 'A' : *p);
            p++;
        }
        if (!n || tsc_peak_word_ignored(w, n))
            continue;
        if (o + n + 2 > cap) {
            out[0] = 0;
            return;
        }
        if (o)
            out[o++] = ' ';
        memcpy(out + o, w, n);
        o += n;
        out[o] = 0;
    }
}

/* The row of device_name's exact model, NULL when none. */
static inline const tsc_peak_row *tsc_peak_row_of(const char *device_name)
{
    if (!device_name)
        return NULL;
    char key[256];
    tsc_peak_model_key(device_name, key, sizeof key);
    if (!key[0])
        return NULL;
    for (size_t i = 0; i < sizeof tsc_peak_rows / sizeof tsc_peak_rows[0]; i++) {
        const char *k = tsc_peak_rows[i].key;
        size_t n = strlen(k);
        if (n > 2 && !strcmp(k + n - 2, " *")) {
            /* the model, then nothing or further words */
            if (!strncmp(key, k, n - 2) && (key[n - 2] == 0 || key[n - 2] == ' '))
                return &tsc_peak_rows[i];
        } else if (!strcmp(key, k)) {
            return &tsc_peak_rows[i];
        }
    }
    return NULL;
}

/* Dense peak FLOP/s of device_name at precision prec; 0 when unknown.
 * *entry (when not NULL) receives the matched row's name, or "unknown".
 * An unknown precision counts as bf16, the common training dtype, or fp16
 * on a GPU without bf16 tensor cores (V100, Turing). */
static inline double tsc_peak_flops(const char *device_name, int prec, const char **entry)
{
    if (entry)
        *entry = "unknown";
    int col = prec == TSC_PREC_UNKNOWN ? TSC_PREC_BF16 : prec;
    if (col < 0 || col > TSC_PREC_FP8)
        return 0;
    const tsc_peak_row *row = tsc_peak_row_of(device_name);
    if (!row)
        return 0;
    if (entry)
        *entry = row->entry;
    if (prec == TSC_PREC_UNKNOWN && !row->tf[col])
        col = TSC_PREC_FP16;
    return row->tf[col] * 1e12;
}

#endif
