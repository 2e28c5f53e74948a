/* Our NCCL ABI declarations and the dump's NCCL enums against nccl.h
 * (built only when the CUDA headers are present). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <nccl.h>

#include "nccl_abi.h"
#include "tsc_format.h"

int tsc_nccl_abi_protos_checked(void);

#define EQ(a, b) _Static_assert((long long)(a) == (long long)(b), #a " != " #b)

EQ(tsc_ncclSuccess, ncclSuccess);
EQ(tsc_ncclUnhandledCudaError, ncclUnhandledCudaError);
EQ(tsc_ncclSystemError, ncclSystemError);
EQ(tsc_ncclInternalError, ncclInternalError);
EQ(tsc_ncclInvalidArgument, ncclInvalidArgument);
EQ(tsc_ncclInvalidUsage, ncclInvalidUsage);
EQ(tsc_ncclRemoteError, ncclRemoteError);
EQ(tsc_ncclInProgress, ncclInProgress);
EQ(tsc_ncclSum, ncclSum);
EQ(tsc_ncclProd, ncclProd);
EQ(tsc_ncclMax, ncclMax);
EQ(tsc_ncclMin, ncclMin);
EQ(tsc_ncclAvg, ncclAvg);
EQ(TSC_NCCL_SPLIT_NOCOLOR, NCCL_SPLIT_NOCOLOR);
EQ(TSC_NCCL_UNIQUE_ID_BYTES, NCCL_UNIQUE_ID_BYTES);
EQ(sizeof(tsc_nccl_unique_id), sizeof(ncclUniqueId));
EQ(sizeof(tsc_nccl_result_t), sizeof(ncclResult_t));
EQ(sizeof(tsc_nccl_dtype_t), sizeof(ncclDataType_t));
EQ(sizeof(tsc_nccl_redop_t), sizeof(ncclRedOp_t));

static const struct {
    long long ours, fmt, theirs;
} dtypes[] = {
    {tsc_ncclInt8, TSC_DT_INT8, ncclInt8},
    {tsc_ncclUint8, TSC_DT_UINT8, ncclUint8},
    {tsc_ncclInt32, TSC_DT_INT32, ncclInt32},
    {tsc_ncclUint32, TSC_DT_UINT32, ncclUint32},
    {tsc_ncclInt64, TSC_DT_INT64, ncclInt64},
    {tsc_ncclUint64, TSC_DT_UINT64, ncclUint64},
    {tsc_ncclFloat16, TSC_DT_FLOAT16, ncclFloat16},
    {tsc_ncclFloat32, TSC_DT_FLOAT32, ncclFloat32},
    {tsc_ncclFloat64, TSC_DT_FLOAT64, ncclFloat64},
    {tsc_ncclBfloat16, TSC_DT_BFLOAT16, ncclBfloat16},
    {tsc_ncclFloat8e4m3, TSC_DT_FLOAT8E4M3, ncclFloat8e4m3},
    {tsc_ncclFloat8e5m2, TSC_DT_FLOAT8E5M2, ncclFloat8e5m2},
    {tsc_ncclNumTypes, 12, ncclNumTypes},
};

static void test_datatypes_match(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++) {
        assert_int_equal(dtypes[i].ours, dtypes[i].theirs);
        assert_int_equal(dtypes[i].fmt, dtypes[i].theirs);
    }
}

static void test_prototypes_were_checked(void **state)
{
    (void)state;
    /* The real check happens when test_nccl_abi_protos.c compiles: every
     * operation of the table and the three queries. */
    int ops = 0;
#define COUNT_OP(id, code, name, kind, busbw, args) ops++;
    TSC_NCCL_OPS(COUNT_OP)
#undef COUNT_OP
    assert_int_equal(tsc_nccl_abi_protos_checked(), ops + 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_datatypes_match),
        cmocka_unit_test(test_prototypes_were_checked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
