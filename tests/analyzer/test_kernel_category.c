/* The one kernel categorizer (load/kernel_category.c) on names as real
 * traces write them: words match whole tokens, the kernel's own name
 * decides before its template arguments. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "load/job_build.h"

typedef struct named {
    const char *name;
    tsa_kcat cat;
} named;

static void check(const named *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        tsa_kcat got = tsa_kernel_category(v[i].name);
        if (got != v[i].cat)
            fail_msg("%s: %s, expected %s", v[i].name, tsa_kcat_name(got),
                     tsa_kcat_name(v[i].cat));
    }
}

/* Each of these was mis-categorized by substring matching. */
static void test_substring_bugs(void **state)
{
    (void)state;
    static const named v[] = {
        /* "lamb" inside "{lambda": elementwise kernels became optimizer */
        {"void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::"
         "launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, "
         "at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#7}::"
         "operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2> >(int, ...)",
         TSA_KCAT_ELEMENTWISE},
        {"void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl<at::native::"
         "CUDAFunctor_add<float> >(at::TensorIteratorBase&, at::native::CUDAFunctor_add<float> "
         "const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl<...>::{lambda(int)#1})",
         TSA_KCAT_ELEMENTWISE},
        /* amd_trace: reduce_kernel with a {lambda in its functor */
        {"void at::native::reduce_kernel<128, 4, at::native::ReduceOp<float, at::native::"
         "func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()"
         "(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4> >"
         "(at::native::ReduceOp<...>)",
         TSA_KCAT_REDUCTION},
        /* "gemm" inside "fbgemm_gpu": embedding kernels became GEMMs */
        {"void fbgemm_gpu::permute_2D_lengths_kernel<int>(int, int, int const*, int const*, int*)",
         TSA_KCAT_COPY},
        {"void fbgemm_gpu::_offsets_range_cuda_kernel<long>(long, long, long const*, long*)",
         TSA_KCAT_OTHER},
        /* "norm" inside "normal": a random-number kernel is no norm */
        {"void at::native::(anonymous namespace)::normal_kernel<float>(float*)", TSA_KCAT_OTHER},
        /* "copy" in the functor of an elementwise kernel */
        {"void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<"
         "at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}>",
         TSA_KCAT_ELEMENTWISE},
    };
    check(v, sizeof v / sizeof v[0]);
}

static void test_real_names(void **state)
{
    (void)state;
    static const named v[] = {
        {"ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclWorkElem)", TSA_KCAT_COMM},
        {"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
         TSA_KCAT_COMM},
        {"ncclDevKernel_ReduceScatter_Sum", TSA_KCAT_COMM},
        {"void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::"
         "(anonymous namespace)::TensorListMetadata<2>, at::native::(anonymous namespace)::"
         "FusedSgdMathFunctor<float, 2>, double*, float*>",
         TSA_KCAT_OPTIMIZER},
        {"void multi_tensor_apply_kernel<TensorListMetadata<4>, AdamFunctor<float>, float>",
         TSA_KCAT_OPTIMIZER},
        {"multi_tensor_apply_kernel<AdamFunctor>", TSA_KCAT_OPTIMIZER},
        {"flash_bwd_dq_dk_dv_loop_kernel", TSA_KCAT_ATTENTION},
        {"volta_sgemm_128x32_nt", TSA_KCAT_GEMM},
        {"ampere_gcgemm_64x64_nt", TSA_KCAT_GEMM},
        {"void magma_sgemmEx_kernel<float, float, float, true, false, 6, 4, 6, 3, 4>(int)",
         TSA_KCAT_GEMM},
        {"void gemmk1_kernel<float, 256, 5, false, false, false, false>(int)", TSA_KCAT_GEMM},
        {"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_16x4_nt_align1>(x)",
         TSA_KCAT_GEMM},
        {"cutlass::Kernel2<cutlass_80_tensorop>", TSA_KCAT_GEMM},
        /* an implicit-GEMM forward convolution is a convolution */
        {"sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw", TSA_KCAT_CONV},
        {"sm90_xmma_gemm_bf16", TSA_KCAT_GEMM},
        {"Cijk_Alik_Bljk_SB_Bias_AS_SAV_UserArgs_MT64x16x32_MI16x16x1_SN_LDSB0", TSA_KCAT_GEMM},
        {"nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NTN", TSA_KCAT_GEMM},
        {"void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int)",
         TSA_KCAT_NORM},
        {"void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 32, true, 1, true>(x)",
         TSA_KCAT_NORM},
        {"rmsnorm_fwd_kernel", TSA_KCAT_NORM},
        {"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::"
         "MeanOps<float, float, float, float>, unsigned int, float, 4> >(x)",
         TSA_KCAT_REDUCTION},
        {"void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float>(float*)",
         TSA_KCAT_REDUCTION},
        {"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
         "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, ...)",
         TSA_KCAT_ELEMENTWISE},
        {"triton_poi_fused_add_0", TSA_KCAT_ELEMENTWISE},
        {"void at::native::(anonymous namespace)::CatArrayBatchedCopy<float, unsigned int, 2>(x)",
         TSA_KCAT_COPY},
        {"Memcpy DtoD (Device -> Device)", TSA_KCAT_COPY},
        {"Memset (Device)", TSA_KCAT_COPY},
        {"fill_kernel", TSA_KCAT_COPY},
        /* issue 23: names from the public traces of the corpus */
        {"cudnn_ampere_scudnn_128x64_relu_xregs_large_nn_v1", TSA_KCAT_CONV},
        {"void cudnn::detail::dgrad_engine<float, 512, 6, 5, 3, 3, 3, false>(int, int)",
         TSA_KCAT_CONV},
        {"void cudnn::cnn::wgrad_alg0_engine<float, 128, 6, 7, 3, 3, 5, false, 512>(int)",
         TSA_KCAT_CONV},
        {"void implicit_convolve_sgemm<float, float, 1024, 6, 7, 3, 3, 5, 1, false>(int)",
         TSA_KCAT_CONV},
        {"volta_scudnn_128x128_stridedB_splitK_small_nn_v1", TSA_KCAT_CONV},
        {"void fft2d_c2r_32x32<float, false, false, 0u, false, false>(float*)", TSA_KCAT_CONV},
        {"igemm_wrw_gtcx2_nhwc_bf16_bx0_ex1_bt256x128x16_wt32x32x8", TSA_KCAT_CONV},
        {"fmha_cutlassF_f16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel)",
         TSA_KCAT_ATTENTION},
        {"void flash::flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4>>()",
         TSA_KCAT_ATTENTION},
        {"void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 512, true, 1>(x)",
         TSA_KCAT_NORM},
        /* a tile tag "bN" is no batch norm */
        {"void gemv2T_kernel_val<int, int, float, float, float, 128, 16, 4, 4, false>(bN)",
         TSA_KCAT_GEMM},
        {"my_kernel_bN128_tile", TSA_KCAT_OTHER},
        {"bmm_Bfloat16_MxE2m1MxE4m3_Fp32_t128x16x256u2_s3_et128x16_m128x16x32", TSA_KCAT_GEMM},
        /* communication beyond nccl* names */
        {"void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>(x)",
         TSA_KCAT_COMM},
        {"void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(x)", TSA_KCAT_COMM},
        {"void deep_ep::intranode::dispatch<8, 768, 8192>(int4*, float*)", TSA_KCAT_COMM},
        {"nvshmemi_transfer_rma_kernel", TSA_KCAT_COMM},
        {"void split_embedding_codegen_forward_unweighted_kernel<float, float, float, long>(x)",
         TSA_KCAT_EMBEDDING},
        {"void at::native::(anonymous namespace)::max_pool_forward_nchw<float, float>(int)",
         TSA_KCAT_REDUCTION},
        {"my_custom_kernel", TSA_KCAT_OTHER},
        {"", TSA_KCAT_OTHER},
        {NULL, TSA_KCAT_OTHER},
    };
    check(v, sizeof v / sizeof v[0]);
}

/* A name longer than the token table is cut, not overrun. */
static void test_long_name(void **state)
{
    (void)state;
    static char name[8192];
    size_t n = 0;
    while (n + 4 < sizeof name - 8) {
        memcpy(name + n, "a_b_", 4);
        n += 4;
    }
    memcpy(name + n, "gemm", 5);
    assert_int_equal(tsa_kernel_category(name), TSA_KCAT_OTHER);
    memcpy(name, "gemm_", 5);
    assert_int_equal(tsa_kernel_category(name), TSA_KCAT_GEMM);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_substring_bugs),
        cmocka_unit_test(test_real_names),
        cmocka_unit_test(test_long_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
