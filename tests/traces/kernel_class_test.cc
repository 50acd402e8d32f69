// Kernel classes and arithmetic from names (traces/kernel_class.h), on names
// as real captures record them (the H200 and H100 datasets) and on layer names.
#include <gtest/gtest.h>

#include "traces/kernel_class.h"

namespace ssgd::trace {
namespace {

TEST(KernelClass, KernelsOfRealCaptures) {
  struct Case {
    const char* name;
    KernelClass kind;
  };
  for (const Case& c : {
           Case{"sm90_xmma_wgrad_indexed_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize128x128x32", KernelClass::kConv},
           Case{"void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 128, true, 1>(float)", KernelClass::kNorm},
           Case{"void cudnn::engines_precompiled::nchwToNhwcKernel<float, float, float, false, true>(x)", KernelClass::kCopy},
           Case{"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>(int)", KernelClass::kElementwise},
           Case{"void at::native::(anonymous namespace)::max_pool_forward_nchw<float, int>(int)", KernelClass::kReduce},
           Case{"void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_32x3_tn_align4>(x)", KernelClass::kGemm},
           Case{"nvjet_sm90_hsh_320x128_64x3_4x2_h_bz_coopB_NNT", KernelClass::kGemm},
           Case{"void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernelTemplate<float>(x)", KernelClass::kNorm},
           Case{"memcpy", KernelClass::kCopy},
           Case{"ncclDevKernel_AllReduce_Sum_f32_RING_LL", KernelClass::kNccl},
           Case{"void at_cuda_detail::cub::detail::radix_sort::DeviceRadixSortOnesweepKernel<x>(y)", KernelClass::kReduce},
           Case{"void at::native::(anonymous namespace)::krn_partials_per_segment<long>(long*)", KernelClass::kOther},
       }) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(classify_kernel(c.name), c.kind);
  }
}

TEST(KernelClass, LayerNamesKeepTheirClasses) {
  EXPECT_EQ(classify_kernel("volta_sgemm_128x64_nn"), KernelClass::kGemm);
  EXPECT_EQ(classify_kernel("implicit_gemm_kernel"), KernelClass::kConv);  // cuDNN convolution
  EXPECT_EQ(classify_kernel("ncclKernel_AllReduce_RING_LL_Sum_float"), KernelClass::kNccl);
  EXPECT_EQ(classify_kernel("encoder.layer.0.output.LayerNorm"), KernelClass::kNorm);
  EXPECT_EQ(classify_kernel("vectorized_elementwise_kernel"), KernelClass::kElementwise);
  EXPECT_EQ(classify_kernel("layer1.0.conv1"), KernelClass::kConv);
  EXPECT_EQ(classify_kernel("bn1"), KernelClass::kNorm);
  EXPECT_EQ(classify_kernel("encoder.layer.0.attention.self.query"), KernelClass::kGemm);
  EXPECT_EQ(classify_kernel("fc"), KernelClass::kGemm);
  EXPECT_EQ(classify_kernel("downsample.0"), KernelClass::kOther);
}

TEST(KernelClass, ArithmeticFromTheName) {
  EXPECT_EQ(kernel_math("sm90_xmma_gemm_f32f32_tf32f32_f32_nt_n_tilesize128x128x32"), KernelMath::kTf32);
  EXPECT_EQ(kernel_math("sm90_xmma_gemm_f32f32_f32f32_f32_nt_n"), KernelMath::kFp32);
  EXPECT_EQ(kernel_math("cutlass_80_tensorop_s1688gemm_128x128_32x3_tn_align4"), KernelMath::kTf32);
  EXPECT_EQ(kernel_math("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n"), KernelMath::kBf16);
  EXPECT_EQ(kernel_math("ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_64x3_nn"), KernelMath::kFp16);
  EXPECT_EQ(kernel_math("volta_h884gemm_64x64_ldg8_nn"), KernelMath::kFp16);
  EXPECT_EQ(kernel_math("nvjet_sm90_hsh_320x128_64x3_4x2_h_bz_coopB_NNT"), KernelMath::kFp16);
  EXPECT_EQ(kernel_math("volta_sgemm_128x64_nn"), KernelMath::kFp32);
  EXPECT_EQ(kernel_math("sm90_xmma_gemm_e4m3e4m3_e4m3f32_f32_tn_n"), KernelMath::kFp8);
  EXPECT_FALSE(kernel_math("gemmSN_TN_kernel").has_value());
  EXPECT_TRUE(is_memory_class(KernelClass::kCopy));
  EXPECT_TRUE(is_compute_class(KernelClass::kConv));
  EXPECT_FALSE(is_compute_class(KernelClass::kNccl) || is_memory_class(KernelClass::kOther));
}

}  // namespace
}  // namespace ssgd::trace
