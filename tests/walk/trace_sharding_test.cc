// Sharded runs read back from PyTorch profiles (walk/trace_sharding.h through
// walk/trace_profile.h): small FSDP1 and FSDP2 Kineto files written by
// tests/support/fsdp_kineto_writer.h, imported, then profiled: the rows and
// their units, the strategy (zero3, zero2, hsdp), shard_group, grad_dtype
// and each unit's gradient bytes, and what is said when something cannot be
// recovered. SSGD_FSDP_CAPTURE=<Kineto JSON> also imports a real capture and
// prints its profile (not run otherwise).

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <numeric>

#include "tests/support/fsdp_kineto_writer.h"
#include "tests/support/test_files.h"
#include "traces/import/pytorch/pytorch_import.h"
#include "walk/trace_profile.h"

namespace ssgd::walk {
namespace {

using ::testing::ElementsAre;
using testing::FsdpKinetoWriter;
using testing::FsdpTraceOptions;
using ::testing::HasSubstr;
using ::testing::Not;

class TraceShardingTest : public testing::TempDirTest {
 protected:
  TraceProfileResult profile(const FsdpTraceOptions& o) {
    const auto json = dir_ / "rank0.json";
    FsdpKinetoWriter(o).write(json);
    const auto out = dir_ / "rank0.ssgdt";
    trace::import_pytorch(json, out);
    auto reader = trace::TraceReader::open(out);
    return profile_from_trace(reader, out.string());
  }

  // The same trace with FSDP1's range names stripped: the layer marks and
  // the collectives alone.
  TraceProfileResult profile_without_fsdp_ranges(const FsdpTraceOptions& o) {
    const auto json = dir_ / "rank0.json";
    FsdpKinetoWriter(o).write(json);
    std::string text = testing::read_file_bytes(json);
    for (std::size_t at = 0;
         (at = text.find("FullyShardedDataParallel.", at)) != std::string::npos;) {
      text.replace(at, 25, "Other.");
    }
    testing::write_file_bytes(json, text);
    const auto out = dir_ / "rank0.ssgdt";
    trace::import_pytorch(json, out);
    auto reader = trace::TraceReader::open(out);
    return profile_from_trace(reader, out.string());
  }

  static std::vector<std::string> names(const trace::LayerProfile& p) {
    std::vector<std::string> out;
    for (const auto& row : p.layers) out.push_back(row.name);
    return out;
  }
  static std::vector<std::int64_t> units(const trace::LayerProfile& p) {
    std::vector<std::int64_t> out;
    for (const auto& row : p.layers) out.push_back(row.unit.value_or(-1));
    return out;
  }
  static std::string all(const std::vector<std::string>& warnings) {
    return std::accumulate(warnings.begin(), warnings.end(), std::string(),
                           [](std::string a, const std::string& b) { return a + b + "\n"; });
  }
  // The rows embed, l0, l1, head: l0 and l1 have their units' reduce-scatters
  // whole; embed and head split the root's.
  static void expect_unit_bytes(const trace::LayerProfile& p, std::int64_t element_bytes) {
    ASSERT_EQ(p.layers.size(), 4u);
    EXPECT_EQ(p.layers[1].grad_bytes, FsdpKinetoWriter::kUnitElems[0] * element_bytes);
    EXPECT_EQ(p.layers[2].grad_bytes, FsdpKinetoWriter::kUnitElems[1] * element_bytes);
    EXPECT_EQ(p.layers[0].grad_bytes + p.layers[3].grad_bytes,
              FsdpKinetoWriter::kRootElems * element_bytes);
    // Split by backward time, the rounding on the unit's last row.
    const auto b0 = static_cast<long double>(p.layers[0].backward.ns());
    const auto b3 = static_cast<long double>(p.layers[3].backward.ns());
    EXPECT_EQ(p.layers[0].grad_bytes,
              static_cast<std::int64_t>(FsdpKinetoWriter::kRootElems * element_bytes * b0 / (b0 + b3)));
  }
};

// Gradients reduced to their owners (one reduce per owner, DeepSpeed's
// ZeRO-1/2): the profile says so, and the reduces give the units' bytes.
TEST_F(TraceShardingTest, ReducesPerOwnerAreTheGradients) {
  FsdpTraceOptions o;
  o.reduce_per_owner = true;
  const auto r = profile(o);
  EXPECT_EQ(r.profile.sharding, "zero3");
  EXPECT_EQ(r.profile.gradient_reduction, "reduce");
  EXPECT_EQ(r.profile.grad_dtype, "bf16");
  expect_unit_bytes(r.profile, 2);
  // With reduce-scatters, nothing is said: the default.
  EXPECT_EQ(profile(FsdpTraceOptions{}).profile.gradient_reduction, "");
}

TEST_F(TraceShardingTest, Fsdp2FullShardIsZero3WithUnitsAndReduceScatterBytes) {
  const auto r = profile({});
  const auto& p = r.profile;
  EXPECT_EQ(p.sharding, "zero3");
  EXPECT_EQ(p.shard_group, 8);
  EXPECT_EQ(p.grad_dtype, "bf16");
  EXPECT_THAT(r.units, ElementsAre("(root)", "layers.0", "layers.1"));
  EXPECT_THAT(names(p), ElementsAre("embed", "l0", "l1", "head"));
  // The root's head comes after the other units: a unit of its own in the column.
  EXPECT_THAT(units(p), ElementsAre(0, 1, 2, 3));
  expect_unit_bytes(p, 2);
  EXPECT_EQ(r.gathers, 5);  // 3 before the forward, 2 before the backward (one step used)
  // The all-gathers' time is no layer's gradient communication.
  ASSERT_TRUE(p.layers[1].comm.has_value());
  EXPECT_EQ(p.layers[1].comm->ns(), 2000);  // the reduce-scatter's kernel alone
}

// The optimizer stepped on one shard: the profile's update is the whole
// model's, the shard's times the ranks a shard spans (the replay divides it
// by its own), and the profile says so. The same trace at 8 and 4 ranks.
TEST_F(TraceShardingTest, TheUpdateIsTheWholeModelsTheShardsTimesTheRanksAShardSpans) {
  const auto eight = profile({});
  const auto four = profile({.world_size = 4});
  ASSERT_TRUE(eight.profile.update.has_value() && four.profile.update.has_value());
  EXPECT_EQ(eight.profile.update->ns(), 2 * four.profile.update->ns());
  EXPECT_EQ(eight.profile.update->ns() % 8, 0);
  EXPECT_THAT(
      all(eight.warnings),
      HasSubstr(fmt::format("the optimizer stepped on one shard of 8 ranks ({:.3f} ms); the "
                            "profile's update is the whole model's, 8 times that ({:.3f} ms)",
                            static_cast<double>(eight.profile.update->ns()) / 8e6,
                            static_cast<double>(eight.profile.update->ns()) / 1e6)));
  // HSDP: the shard group's 4 ranks.
  EXPECT_THAT(all(profile({.hsdp = true}).warnings), HasSubstr("one shard of 4 ranks"));
  // One GPU, no collective: its shard is the model, nothing said.
  EXPECT_THAT(all(profile({.collectives = false}).warnings), Not(HasSubstr("one shard of")));
}

TEST_F(TraceShardingTest, Fsdp1FullShardNamesUnitsByPositionAndPlacesReductionsByOrder) {
  const auto r = profile({.fsdp1 = true});
  const auto& p = r.profile;
  EXPECT_EQ(p.sharding, "zero3");
  EXPECT_EQ(p.shard_group, 8);
  EXPECT_THAT(r.units, ElementsAre("unit0", "unit1", "unit2"));
  EXPECT_THAT(units(p), ElementsAre(0, 1, 2, 3));
  expect_unit_bytes(p, 2);
}

TEST_F(TraceShardingTest, NoReshardAfterForwardIsZero2) {
  const auto r = profile({.reshard_after_forward = false});
  EXPECT_EQ(r.profile.sharding, "zero2");
  EXPECT_EQ(r.profile.shard_group, 8);
  expect_unit_bytes(r.profile, 2);
  EXPECT_EQ(profile({.fsdp1 = true, .reshard_after_forward = false}).profile.sharding, "zero2");
}

TEST_F(TraceShardingTest, HybridShardIsHsdpAndItsAllReducesAreNotCountedAgain) {
  const auto r = profile({.hsdp = true});
  const auto& p = r.profile;
  EXPECT_EQ(p.sharding, "hsdp");
  EXPECT_EQ(p.shard_group, 4);
  EXPECT_EQ(p.grad_dtype, "bf16");
  expect_unit_bytes(p, 2);
}

// HSDP without reduce-scatters (the testbed's loop over gloo): each unit's
// gradients sent to their owners by G reduces over the shard group, then
// the owner's shard all-reduced across the groups. Still hsdp, reduced by
// "reduce"; the reduces give the units' bytes, the all-reduces never count,
// with FSDP ranges naming the units and without.
TEST_F(TraceShardingTest, HybridShardByReducesIsHsdpAndItsAllReducesAreNotCounted) {
  const FsdpTraceOptions o{.hsdp = true, .reduce_per_owner = true};
  const auto r = profile(o);
  const auto& p = r.profile;
  EXPECT_EQ(p.sharding, "hsdp");
  EXPECT_EQ(p.gradient_reduction, "reduce");
  EXPECT_EQ(p.shard_group, 4);
  EXPECT_EQ(p.grad_dtype, "bf16");
  expect_unit_bytes(p, 2);
  // Without the FSDP ranges: the layers' own collectives, the reduces alone.
  const auto bare =
      profile_without_fsdp_ranges({.fsdp1 = true, .hsdp = true, .reduce_per_owner = true});
  EXPECT_EQ(bare.profile.sharding, "hsdp");
  EXPECT_EQ(bare.profile.gradient_reduction, "reduce");
  EXPECT_FALSE(bare.profile.has_units());
  std::int64_t total = 0;
  for (const auto& row : bare.profile.layers) total += row.grad_bytes;
  EXPECT_EQ(total, (FsdpKinetoWriter::kRootElems + FsdpKinetoWriter::kUnitElems[0] +
                    FsdpKinetoWriter::kUnitElems[1]) *
                       2);
  // World-wide reduces (DeepSpeed's ZeRO-1/2) with no all-reduce stay zero3.
  EXPECT_EQ(profile({.reduce_per_owner = true}).profile.sharding, "zero3");
}

TEST_F(TraceShardingTest, Fp32GradientsCountFourBytesAnElement) {
  const auto r = profile({.grad_dtype = "Float", .gather_dtype = "Float"});
  EXPECT_EQ(r.profile.grad_dtype, "fp32");
  expect_unit_bytes(r.profile, 4);
}

TEST_F(TraceShardingTest, OneGpuWithoutCollectivesIsReadFromTheRangesAndSaysSizesAreUnknown) {
  const auto zero3 = profile({.collectives = false});
  EXPECT_EQ(zero3.profile.sharding, "zero3");
  EXPECT_FALSE(zero3.profile.shard_group.has_value());
  EXPECT_EQ(zero3.profile.grad_dtype, "");
  EXPECT_THAT(units(zero3.profile), ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(all(zero3.warnings), HasSubstr("no all-gather (world size 1?): sharding zero3"));
  EXPECT_THAT(all(zero3.warnings), HasSubstr("sizes are unknown"));
  const auto zero2 = profile({.reshard_after_forward = false, .collectives = false});
  EXPECT_EQ(zero2.profile.sharding, "zero2");
}

TEST_F(TraceShardingTest, AllGathersWithoutSizesAreSaidAndNeverGradients) {
  const auto r = profile({.gather_sizes = false});
  EXPECT_EQ(r.profile.sharding, "zero3");
  EXPECT_FALSE(r.profile.shard_group.value_or(0) == 0);
  EXPECT_THAT(all(r.warnings), HasSubstr("all-gather(s) had no size (first: record"));
  expect_unit_bytes(r.profile, 2);
}

TEST_F(TraceShardingTest, WithoutFsdpRangesTheGathersStillNeverCountAsGradients) {
  // The layer marks alone (no unit ranges).
  const auto r = profile_without_fsdp_ranges({.fsdp1 = true});
  EXPECT_EQ(r.profile.sharding, "zero3");
  EXPECT_FALSE(r.profile.has_units());
  EXPECT_THAT(all(r.warnings), HasSubstr("no FSDP ranges naming its units: no unit column"));
  std::int64_t total = 0;
  for (const auto& row : r.profile.layers) total += row.grad_bytes;
  EXPECT_EQ(total, (FsdpKinetoWriter::kRootElems + FsdpKinetoWriter::kUnitElems[0] +
                    FsdpKinetoWriter::kUnitElems[1]) * 2);
}

TEST_F(TraceShardingTest, ARealCaptureWhenNamed) {
  const char* capture = std::getenv("SSGD_FSDP_CAPTURE");
  if (capture == nullptr) GTEST_SKIP() << "set SSGD_FSDP_CAPTURE to a Kineto JSON of an FSDP run";
  const auto out = dir_ / "capture.ssgdt";
  trace::import_pytorch(capture, out);
  auto reader = trace::TraceReader::open(out);
  const auto r = profile_from_trace(reader, out.string());
  trace::write_layer_profile_csv(r.profile, std::cout);
  for (const auto& u : r.units) std::cout << "unit " << u << "\n";
  for (const auto& w : r.warnings) std::cout << "warning: " << w << "\n";
}

}  // namespace
}  // namespace ssgd::walk
