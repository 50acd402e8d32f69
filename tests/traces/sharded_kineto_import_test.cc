// The importer on sharded runs (docs/kineto.md, "Sharded runs"): FSDP's
// ranges kept as marker ranges, all-gathers and reduce-scatters with their
// whole buffer, dtype and group, the c10d names of the sharded collectives,
// and the warnings for an all-gather without size and an unknown dtype.
// Files from tests/support/fsdp_kineto_writer.h.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <numeric>

#include "tests/support/fsdp_kineto_writer.h"
#include "tests/support/test_files.h"
#include "traces/collective_names.h"
#include "traces/import/pytorch/pytorch_import.h"
#include "traces/torch_op_names.h"
#include "traces/trace_reader.h"

namespace ssgd::trace {
namespace {

using ::testing::HasSubstr;
using testing::FsdpKinetoWriter;
using testing::FsdpTraceOptions;

class ShardedKinetoImportTest : public testing::TempDirTest {
 protected:
  PytorchImportSummary import(const FsdpTraceOptions& o, const std::string& edit_from = "",
                              const std::string& edit_to = "") {
    const auto json = dir_ / "rank0.json";
    FsdpKinetoWriter(o).write(json);
    if (!edit_from.empty()) {
      std::string text = testing::read_file_bytes(json);
      for (std::size_t at = 0; (at = text.find(edit_from, at)) != std::string::npos;
           at += edit_to.size()) {
        text.replace(at, edit_from.size(), edit_to);
      }
      testing::write_file_bytes(json, text);
    }
    auto s = import_pytorch(json, dir_ / "rank0.ssgdt");
    auto reader = TraceReader::open(dir_ / "rank0.ssgdt");
    v1::Event ev;
    while (reader.next(ev)) {
      if (ev.has_collective()) collectives_.push_back(ev.collective());
      if (ev.has_marker()) markers_.push_back(ev.marker().name());
    }
    return s;
  }
  static std::string all(const std::vector<std::string>& warnings) {
    return std::accumulate(warnings.begin(), warnings.end(), std::string(),
                           [](std::string a, const std::string& b) { return a + b + "\n"; });
  }
  std::vector<v1::Collective> collectives_;
  std::vector<std::string> markers_;
};

TEST_F(ShardedKinetoImportTest, GathersAndReduceScattersKeepTheirWholeBufferDtypeAndGroup) {
  const auto s = import({.steps = 1});
  // Per step: 3 gathers before the forward, 2 before the backward, 3 reduce-scatters.
  ASSERT_EQ(collectives_.size(), 8u);
  std::vector<std::int64_t> gathers, reductions;
  for (const auto& c : collectives_) {
    EXPECT_EQ(c.datatype(), "bfloat16");
    EXPECT_EQ(c.nranks(), 8);
    if (c.op() == v1::Collective::ALL_GATHER) gathers.push_back(c.size_bytes());
    if (c.op() == v1::Collective::REDUCE_SCATTER) {
      reductions.push_back(c.size_bytes());
      EXPECT_EQ(c.count() * 2, c.size_bytes());
    }
  }
  // The gathered output (Out msg nelems), not this rank's shard.
  EXPECT_THAT(gathers, ::testing::ElementsAre(2000, 8000, 16000, 16000, 8000));
  // The unreduced input (In msg nelems), layers.1's first.
  EXPECT_THAT(reductions, ::testing::ElementsAre(16000, 8000, 2000));
  EXPECT_EQ(s.mapping.fsdp2_ranges, s.mapping.sharding_ranges);
  EXPECT_GT(s.mapping.sharding_ranges, 0u);
  EXPECT_NE(std::find(markers_.begin(), markers_.end(), "FSDP::pre_forward (layers.0)"),
            markers_.end());
  EXPECT_NE(std::find(markers_.begin(), markers_.end(), "FSDP::all_gather (layers.1)"),
            markers_.end());
  EXPECT_NE(std::find(markers_.begin(), markers_.end(), "FSDP::pre_forward"), markers_.end());
}

// Without c10d's output count an all-gather's input is its shard: the whole
// buffer is that times the group (8 here), the same sizes as above.
TEST_F(ShardedKinetoImportTest, AnAllGatherWithItsShardsCountAloneIsTheShardTimesTheGroup) {
  import({.steps = 1}, "\"Out msg nelems\"", "\"Out msg count (not c10d's)\"");
  std::vector<std::int64_t> gathers, reductions;
  for (const auto& c : collectives_) {
    if (c.op() == v1::Collective::ALL_GATHER) gathers.push_back(c.size_bytes());
    if (c.op() == v1::Collective::REDUCE_SCATTER) reductions.push_back(c.size_bytes());
  }
  EXPECT_THAT(gathers, ::testing::ElementsAre(2000, 8000, 16000, 16000, 8000));
  EXPECT_THAT(reductions, ::testing::ElementsAre(16000, 8000, 2000));  // their input: whole
}

TEST_F(ShardedKinetoImportTest, Fsdp1RangesAreKeptToo) {
  const auto s = import({.fsdp1 = true, .steps = 1});
  EXPECT_EQ(s.mapping.fsdp2_ranges, 0u);
  EXPECT_NE(std::find(markers_.begin(), markers_.end(), "FullyShardedDataParallel._pre_forward"),
            markers_.end());
  EXPECT_NE(std::find(markers_.begin(), markers_.end(),
                      "FullyShardedDataParallel._post_backward_hook"),
            markers_.end());
}

TEST_F(ShardedKinetoImportTest, AnAllGatherWithoutSizeIsSaidWithItsEvent) {
  const auto s = import({.steps = 1, .gather_sizes = false});
  EXPECT_THAT(all(s.warnings),
              HasSubstr("all-gather(s) or reduce-scatter(s) had no element count (first: "
                        "traceEvents["));
  EXPECT_THAT(all(s.warnings), HasSubstr("].args.In msg nelems)"));
}

TEST_F(ShardedKinetoImportTest, AnUnknownDtypeIsSaidWithItsEventAndLeavesTheSizeUnknown) {
  // The all-gather kernels' names carry no type token: only the dtype tells.
  const auto s = import({.steps = 1, .gather_dtype = "Float7"});
  EXPECT_EQ(s.mapping.collectives_unknown_dtype, 5u);
  EXPECT_THAT(all(s.warnings), HasSubstr("dtype of unknown size (first: traceEvents["));
  EXPECT_THAT(all(s.warnings), HasSubstr("].args.dtype: 'Float7')"));
  for (const auto& c : collectives_) {
    if (c.op() == v1::Collective::ALL_GATHER) {
      EXPECT_EQ(c.size_bytes(), 0);
    }
  }
}

TEST(ShardingNames, C10dNamesOfTheShardedCollectives) {
  for (const char* n : {"_allgather_base", "all_gather_into_tensor",
                        "allgather_into_tensor_coalesced", "all_gather_into_tensor_coalesced"}) {
    EXPECT_EQ(collective_op_from_c10d(n), v1::Collective::ALL_GATHER) << n;
  }
  for (const char* n : {"_reduce_scatter_base", "reduce_scatter_tensor",
                        "reduce_scatter_tensor_coalesced"}) {
    EXPECT_EQ(collective_op_from_c10d(n), v1::Collective::REDUCE_SCATTER) << n;
  }
}

TEST(ShardingNames, Fsdp2AndFsdp1Ranges) {
  using Phase = ShardingRange::Phase;
  auto r = parse_sharding_range("FSDP::pre_forward (encoder.layers.0)");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->phase, Phase::kPreForward);
  EXPECT_EQ(r->unit, "encoder.layers.0");
  EXPECT_TRUE(r->named);
  r = parse_sharding_range("FSDP::pre_forward");
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->named);
  EXPECT_EQ(r->unit, "");  // the root
  r = parse_sharding_range("FSDP::backward_prefetch for encoder.layers.9");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->phase, Phase::kBackwardPrefetch);
  EXPECT_EQ(r->unit, "encoder.layers.9");
  r = parse_sharding_range("FSDP::post_backward_reduce (layers.3)");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->phase, Phase::kPostBackward);
  r = parse_sharding_range("FSDP::all_gather (layers.3)");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->phase, Phase::kAllGather);
  r = parse_sharding_range("FSDP::root_pre_forward");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->phase, Phase::kOther);
  EXPECT_FALSE(r->named);
  r = parse_sharding_range("FullyShardedDataParallel._pre_backward_prefetch");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->framework, ShardingRange::Framework::kFsdp1);
  EXPECT_EQ(r->phase, Phase::kBackwardPrefetch);
  EXPECT_FALSE(r->named);
  EXPECT_FALSE(parse_sharding_range("fsdp::all_gather_copy_in"));  // an operator
  EXPECT_FALSE(parse_sharding_range("aten::mm"));
}

}  // namespace
}  // namespace ssgd::trace
