// The trace's vocabulary of collective operations and datatypes
// (traces/collective_names.h, traces/datatype_names.h): one spelling per
// library, all read in one place.
#include "traces/collective_names.h"

#include <gtest/gtest.h>

#include "traces/datatype_names.h"

namespace ssgd::trace {
namespace {

TEST(CollectiveNames, NcclFunctionNames) {
  EXPECT_EQ(collective_op_from_nccl("AllReduce"), v1::Collective::ALL_REDUCE);
  EXPECT_EQ(collective_op_from_nccl("AlltoAll"), v1::Collective::ALL_TO_ALL);
  EXPECT_EQ(collective_op_from_nccl("AllToAll"), v1::Collective::ALL_TO_ALL);
  EXPECT_EQ(collective_op_from_nccl("Recv"), v1::Collective::RECV);
  EXPECT_EQ(collective_op_from_nccl("ReduceScatter"), v1::Collective::REDUCE_SCATTER);
  EXPECT_EQ(collective_op_from_nccl("SendRecv"), v1::Collective::UNKNOWN);
  EXPECT_EQ(collective_op_from_nccl(""), v1::Collective::UNKNOWN);
}

TEST(CollectiveNames, C10dCollectiveNames) {
  EXPECT_EQ(collective_op_from_c10d("allreduce"), v1::Collective::ALL_REDUCE);
  EXPECT_EQ(collective_op_from_c10d("allreduce_coalesced"), v1::Collective::ALL_REDUCE);
  EXPECT_EQ(collective_op_from_c10d("_allgather_base"), v1::Collective::ALL_GATHER);
  EXPECT_EQ(collective_op_from_c10d("reduce_scatter_tensor_coalesced"),
            v1::Collective::REDUCE_SCATTER);
  EXPECT_EQ(collective_op_from_c10d("reduce"), v1::Collective::REDUCE);
  EXPECT_EQ(collective_op_from_c10d("all_to_all"), v1::Collective::ALL_TO_ALL);
  EXPECT_EQ(collective_op_from_c10d("barrier"), v1::Collective::ALL_REDUCE);
  EXPECT_EQ(collective_op_from_c10d("gather"), v1::Collective::UNKNOWN);
}

TEST(CollectiveNames, HostRangesOfGlooAndC10d) {
  auto caller = parse_host_collective_name("c10d::allreduce_");
  ASSERT_TRUE(caller);
  EXPECT_EQ(caller->role, HostCollectiveName::Role::kCaller);
  EXPECT_EQ(caller->op, v1::Collective::ALL_REDUCE);
  EXPECT_FALSE(caller->barrier);

  auto run = parse_host_collective_name("gloo:all_reduce");
  ASSERT_TRUE(run);
  EXPECT_EQ(run->role, HostCollectiveName::Role::kExecution);
  EXPECT_EQ(run->op, v1::Collective::ALL_REDUCE);
  EXPECT_EQ(parse_host_collective_name("gloo:broadcast")->op, v1::Collective::BROADCAST);
  EXPECT_EQ(parse_host_collective_name("gloo:all_gather")->op, v1::Collective::ALL_GATHER);
  EXPECT_EQ(parse_host_collective_name("c10d::_allgather_base_")->op, v1::Collective::ALL_GATHER);
  EXPECT_EQ(parse_host_collective_name("c10d::alltoall_base_")->op, v1::Collective::ALL_TO_ALL);
  EXPECT_TRUE(parse_host_collective_name("c10d::barrier")->barrier);
  EXPECT_TRUE(parse_host_collective_name("gloo:barrier")->barrier);
  EXPECT_EQ(parse_host_collective_name("c10d::gather_")->op, v1::Collective::UNKNOWN);

  EXPECT_FALSE(parse_host_collective_name("record_param_comms"));
  EXPECT_FALSE(parse_host_collective_name("nccl:all_reduce"));
  EXPECT_FALSE(parse_host_collective_name("aten::add_"));
  EXPECT_FALSE(parse_host_collective_name("c10d::_register_process_group"));
}

TEST(CollectiveNames, CommunicationOpsAreNeverCompute) {
  for (const char* name : {"c10d::allreduce_", "gloo:all_reduce", "nccl:all_reduce",
                           "record_param_comms", "ProcessGroupGloo::allreduce"}) {
    EXPECT_TRUE(is_communication_op(name)) << name;
  }
  for (const char* name : {"aten::addmm", "torch.distributed.ddp.reducer::copy_bucket_to_grad",
                           "Optimizer.step#SGD.step"}) {
    EXPECT_FALSE(is_communication_op(name)) << name;
  }
}

TEST(DatatypeNames, EachLibrarysSpelling) {
  EXPECT_EQ(datatype_from_nccl("ncclFloat16"), "float16");
  EXPECT_EQ(datatype_from_nccl("ncclBfloat16"), "bfloat16");
  EXPECT_EQ(datatype_from_nccl("mystery"), "mystery");
  EXPECT_EQ(datatype_from_c10("Float"), "float32");
  EXPECT_EQ(datatype_from_c10("BFloat16"), "bfloat16");
  EXPECT_EQ(datatype_from_c10("Long"), "int64");
  EXPECT_EQ(datatype_from_c10("Bool"), "uint8");
  EXPECT_EQ(datatype_from_c10("mystery"), "");
  EXPECT_EQ(datatype_from_kernel_token("f32"), "float32");
  EXPECT_EQ(datatype_from_kernel_token("float"), "float32");
  EXPECT_EQ(datatype_from_kernel_token("int8_t"), "int8");
  EXPECT_EQ(datatype_from_kernel_token(""), "");
  EXPECT_EQ(datatype_from_nccl(""), "");
  EXPECT_EQ(datatype_from_torch_type("float"), "float32");
  EXPECT_EQ(datatype_from_torch_type("c10::BFloat16"), "bfloat16");
  EXPECT_EQ(datatype_from_torch_type("long int"), "int64");
  EXPECT_EQ(datatype_from_torch_type(""), "");
  EXPECT_EQ(datatype_size_bytes("int16"), 2);
  EXPECT_EQ(datatype_size_bytes("float64"), 8);
  EXPECT_EQ(datatype_size_bytes("bfloat16"), 2);
  EXPECT_EQ(datatype_size_bytes("mystery"), 0);
}

}  // namespace
}  // namespace ssgd::trace
