// What kernel names say (traces/kernel_names.h), for the importers and the
// DAG readers alike.
#include "traces/kernel_names.h"

#include <gtest/gtest.h>

namespace ssgd::trace {
namespace {

TEST(KernelNames, NcclKernelsOfEveryNcclVersion) {
  EXPECT_TRUE(
      is_nccl_kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"));
  EXPECT_TRUE(is_nccl_kernel("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t"));
  EXPECT_TRUE(is_nccl_kernel("ncclAllReduceRingLLKernel_sum_f32"));
  EXPECT_FALSE(is_nccl_kernel("void at::native::nccl_like_kernel"));
  EXPECT_FALSE(is_nccl_kernel("gemm"));
}

TEST(KernelNames, OldestNcclNamesAreParsedToo) {
  const auto n = parse_nccl_kernel_name("ncclAllReduceRingLLKernel_sum_f32");
  EXPECT_EQ(n.op, v1::Collective::ALL_REDUCE);
  EXPECT_EQ(n.algorithm, "Ring");
  EXPECT_EQ(n.protocol, "LL");
  EXPECT_EQ(n.datatype, "float32");
  const auto b = parse_nccl_kernel_name("ncclReduceScatterTreeLL128Kernel_sum_i8");
  EXPECT_EQ(b.op, v1::Collective::REDUCE_SCATTER);
  EXPECT_EQ(b.algorithm, "Tree");
  EXPECT_EQ(b.protocol, "LL128");
  EXPECT_EQ(b.datatype, "int8");
  EXPECT_EQ(parse_nccl_kernel_name("gemm").op, v1::Collective::UNKNOWN);
}

TEST(KernelNames, OptimizerKernels) {
  EXPECT_TRUE(is_optimizer_kernel("multi_tensor_apply_kernel<...>"));
  EXPECT_TRUE(is_optimizer_kernel("FusedAdamKernel"));
  EXPECT_TRUE(is_optimizer_kernel("sgd_update"));
  EXPECT_FALSE(is_optimizer_kernel("volta_sgemm_128x64_nn"));  // holds "sgemm", not "sgd"
  EXPECT_FALSE(is_optimizer_kernel("relu_kernel"));
}

}  // namespace

TEST(KernelNames, ShortNamesForTables) {
  EXPECT_EQ(short_kernel_name("void cudnn::bn_bw_kernel<float, 128>(float, cudnnTensorStruct)"),
            "cudnn::bn_bw_kernel<float, 128>");
  EXPECT_EQ(short_kernel_name("void at::native::vectorized_elementwise_kernel<4, at::native::"
                              "CUDAFunctor_add<float>, std::array<char*, 3ul> >(int, "
                              "at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)",
                              60),
            "at::native::vectorized_elementwise_kernel<...>");
  EXPECT_EQ(short_kernel_name("sm90_gemm"), "sm90_gemm");
  EXPECT_EQ(short_kernel_name(std::string(200, 'k'), 20), std::string(17, 'k') + "...");
  EXPECT_EQ(short_kernel_name("f<(anonymous namespace)::g>(int)"), "f<(anonymous namespace)::g>");
}

}  // namespace ssgd::trace
