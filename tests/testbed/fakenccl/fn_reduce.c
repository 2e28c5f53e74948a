/* Reductions for the fake NCCL.  16-bit float types are accumulated in
 * float and rounded once at the end. */
#include "fn_reduce.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

size_t fn_dtype_size(ncclDataType_t dt)
{
    switch (dt) {
    case ncclInt8: case ncclUint8: case ncclFloat8e4m3: case ncclFloat8e5m2: return 1;
    case ncclFloat16: case ncclBfloat16: return 2;
    case ncclInt32: case ncclUint32: case ncclFloat32: return 4;
    case ncclInt64: case ncclUint64: case ncclFloat64: return 8;
    default: return 0;
    }
}

int fn_reduce_supported(ncclDataType_t dt, ncclRedOp_t op)
{
    if ((unsigned)op > (unsigned)ncclAvg)
        return 0;
    return dt != ncclFloat8e4m3 && dt != ncclFloat8e5m2 && fn_dtype_size(dt) != 0;
}

float fn_bf16_to_float(unsigned short b)
{
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

unsigned short fn_float_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu))
        return (unsigned short)((u >> 16) | 0x40); /* keep NaN a NaN */
    u += 0x7fffu + ((u >> 16) & 1u);
    return (unsigned short)(u >> 16);
}

float fn_half_to_float(unsigned short h)
{
    int sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    float v;
    if (exp == 0)
        v = ldexpf((float)man, -24);
    else if (exp == 31)
        v = man ? NAN : INFINITY;
    else
        v = ldexpf((float)(man | 0x400), exp - 25);
    return sign ? -v : v;
}

unsigned short fn_float_to_half(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    if (isnan(f))
        return sign | 0x7e00u;
    float a = fabsf(f);
    if (a >= 65520.0f)
        return sign | 0x7c00u;
    if (a < ldexpf(1.0f, -14)) {
        /* subnormal: units of 2^-24, ties to even by nearbyint's default */
        return sign | (uint16_t)nearbyintf(a * ldexpf(1.0f, 24));
    }
    int e;
    float m = frexpf(a, &e);            /* a = m * 2^e, m in [0.5,1) */
    float scaled = nearbyintf(m * 2048.0f); /* 11 significant bits */
    if (scaled >= 2048.0f) {
        scaled /= 2.0f;
        e++;
    }
    int exp = e - 1 + 15;
    if (exp >= 31)
        return sign | 0x7c00u;
    return sign | (uint16_t)(exp << 10) | ((uint16_t)scaled & 0x3ffu);
}

#define FN_COMBINE(acc, x, op)                          \
    do {                                                \
        switch (op) {                                   \
        case ncclProd: acc = acc * (x); break;          \
        case ncclMax: if ((x) > acc) acc = (x); break;  \
        case ncclMin: if ((x) < acc) acc = (x); break;  \
        default: acc = acc + (x); break;                \
        }                                               \
    } while (0)

/* Integer and native float types: accumulate in the type itself (wrapping
 * for unsigned; signed sums go through the unsigned type to stay defined). */
#define FN_REDUCE_NATIVE(T, UT)                                                \
    for (size_t i = 0; i < count; i++) {                                       \
        T acc;                                                                 \
        memcpy(&acc, (const char *)srcs[0] + i * sizeof(T), sizeof(T));        \
        for (int r = 1; r < n; r++) {                                          \
            T x;                                                               \
            memcpy(&x, (const char *)srcs[r] + i * sizeof(T), sizeof(T));      \
            if (op == ncclSum || op == ncclAvg)                                \
                acc = (T)((UT)acc + (UT)x);                                    \
            else if (op == ncclProd)                                           \
                acc = (T)((UT)acc * (UT)x);                                    \
            else                                                               \
                FN_COMBINE(acc, x, op);                                        \
        }                                                                      \
        if (op == ncclAvg)                                                     \
            acc = (T)(acc / (T)n);                                             \
        memcpy((char *)dst + i * sizeof(T), &acc, sizeof(T));                  \
    }

#define FN_REDUCE_FLOAT(T)                                                     \
    for (size_t i = 0; i < count; i++) {                                       \
        T acc;                                                                 \
        memcpy(&acc, (const char *)srcs[0] + i * sizeof(T), sizeof(T));        \
        for (int r = 1; r < n; r++) {                                          \
            T x;                                                               \
            memcpy(&x, (const char *)srcs[r] + i * sizeof(T), sizeof(T));      \
            FN_COMBINE(acc, x, op);                                            \
        }                                                                      \
        if (op == ncclAvg)                                                     \
            acc = acc / (T)n;                                                  \
        memcpy((char *)dst + i * sizeof(T), &acc, sizeof(T));                  \
    }

#define FN_REDUCE_16(TO_F, FROM_F)                                             \
    for (size_t i = 0; i < count; i++) {                                       \
        unsigned short h;                                                      \
        memcpy(&h, (const char *)srcs[0] + i * 2, 2);                          \
        float acc = TO_F(h);                                                   \
        for (int r = 1; r < n; r++) {                                          \
            memcpy(&h, (const char *)srcs[r] + i * 2, 2);                      \
            float x = TO_F(h);                                                 \
            FN_COMBINE(acc, x, op);                                            \
        }                                                                      \
        if (op == ncclAvg)                                                     \
            acc = acc / (float)n;                                              \
        h = FROM_F(acc);                                                       \
        memcpy((char *)dst + i * 2, &h, 2);                                    \
    }

void fn_reduce(ncclDataType_t dt, ncclRedOp_t op, int n, const void *const *srcs, void *dst,
               size_t count)
{
    switch (dt) {
    case ncclInt8: FN_REDUCE_NATIVE(int8_t, uint8_t) break;
    case ncclUint8: FN_REDUCE_NATIVE(uint8_t, uint8_t) break;
    case ncclInt32: FN_REDUCE_NATIVE(int32_t, uint32_t) break;
    case ncclUint32: FN_REDUCE_NATIVE(uint32_t, uint32_t) break;
    case ncclInt64: FN_REDUCE_NATIVE(int64_t, uint64_t) break;
    case ncclUint64: FN_REDUCE_NATIVE(uint64_t, uint64_t) break;
    case ncclFloat32: FN_REDUCE_FLOAT(float) break;
    case ncclFloat64: FN_REDUCE_FLOAT(double) break;
    case ncclFloat16: FN_REDUCE_16(fn_half_to_float, fn_float_to_half) break;
    case ncclBfloat16: FN_REDUCE_16(fn_bf16_to_float, fn_float_to_bf16) break;
    default: break;
    }
}
