// The marker names of the trace (traces/marker_names.h) and PyTorch's range
// names (traces/torch_op_names.h): written and read in one place, with
// errors that name the file, the record and the field.
#include "traces/marker_names.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "traces/torch_op_names.h"

namespace ssgd::trace {
namespace {

using ::testing::HasSubstr;

v1::MarkerRange range(const std::string& name, std::int64_t start = 0, std::int64_t end = 10) {
  v1::MarkerRange m;
  m.set_name(name);
  m.set_start_ns(start);
  m.set_end_ns(end);
  return m;
}

TEST(MarkerNames, WrittenAndReadBack) {
  EXPECT_EQ(iteration_mark(7), "iteration/7");
  EXPECT_EQ(forward_mark("conv1"), "forward/conv1");
  EXPECT_EQ(backward_mark("conv1"), "backward/conv1");
  EXPECT_EQ(grad_bytes_mark("fc", 4096), "ssgd/grad_bytes/fc=4096");
  EXPECT_EQ(activation_bytes_mark("fc", 65536), "ssgd/activation_bytes/fc=65536");

  auto it = parse_marker_name(range(iteration_mark(7)), "t.ssgdt", 3);
  EXPECT_EQ(it.kind, MarkerName::Kind::kIteration);
  EXPECT_EQ(it.number, 7);
  auto fw = parse_marker_name(range(forward_mark("a/b")), "t.ssgdt", 3);
  EXPECT_EQ(fw.kind, MarkerName::Kind::kForward);
  EXPECT_EQ(fw.layer, "a/b");
  EXPECT_EQ(parse_marker_name(range(backward_mark("x")), "t", 0).kind, MarkerName::Kind::kBackward);
  EXPECT_EQ(parse_marker_name(range("io"), "t", 0).kind, MarkerName::Kind::kOther);
  EXPECT_EQ(parse_marker_name(range("ssgd/rank=1"), "t", 0).kind, MarkerName::Kind::kOther);
}

TEST(MarkerNames, MalformedMarksNameFileRecordAndField) {
  try {
    parse_marker_name(range("iteration/x"), "t.ssgdt", 12);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().file, "t.ssgdt");
    EXPECT_EQ(e.where().record, 12);
    EXPECT_EQ(e.where().field, "marker.name");
    EXPECT_THAT(e.what(), HasSubstr("iteration number is not an integer"));
  }
  EXPECT_THROW(parse_marker_name(range("forward/"), "t", 0), InputError);
  try {
    parse_marker_name(range("forward/l1", 10, 5), "t", 0);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().field, "marker.end_ns");
  }
}

TEST(MarkerNames, ProfilerStepNumber) {
  EXPECT_EQ(profiler_step_number("ProfilerStep#12"), 12);
  EXPECT_EQ(profiler_step_number("ProfilerStep#"), std::nullopt);
  EXPECT_EQ(profiler_step_number("ProfilerStep#1x"), std::nullopt);
  EXPECT_EQ(profiler_step_number("iteration/1"), std::nullopt);
}

TEST(MetadataMarks, EveryKeyIsTyped) {
  const InputLocation at{"rank0.json", std::nullopt, 5, ""};
  EXPECT_TRUE(is_metadata_mark("ssgd/rank=1"));
  EXPECT_FALSE(is_metadata_mark("iteration/1"));
  EXPECT_EQ(std::get<RankMark>(parse_metadata_mark("ssgd/rank=3", at)).rank, 3);
  EXPECT_EQ(std::get<WorldSizeMark>(parse_metadata_mark("ssgd/world_size=4", at)).world_size, 4);
  EXPECT_EQ(std::get<HostnameMark>(parse_metadata_mark("ssgd/hostname=h1.example", at)).hostname,
            "h1.example");
  EXPECT_EQ(std::get<ClockRealtimeMark>(
                parse_metadata_mark("ssgd/clock_realtime_ns=1700000000123456789", at))
                .realtime_ns,
            1700000000123456789);
  const auto g = std::get<GradBytesMark>(parse_metadata_mark("ssgd/grad_bytes/0.fc=1050624", at));
  EXPECT_EQ(g.layer, "0.fc");
  EXPECT_EQ(g.bytes, 1050624);
  const auto a =
      std::get<ActivationBytesMark>(parse_metadata_mark("ssgd/activation_bytes/0.relu=131072", at));
  EXPECT_EQ(a.layer, "0.relu");
  EXPECT_EQ(a.bytes, 131072);
  const auto c = std::get<CollectiveBytesMark>(
      parse_metadata_mark("ssgd/collective_bytes=1048576,2048,40", at));
  EXPECT_EQ(c.sizes_bytes, (std::vector<std::int64_t>{1048576, 2048, 40}));
  EXPECT_EQ(c.op, std::nullopt);
  const auto per_op = std::get<CollectiveBytesMark>(
      parse_metadata_mark("ssgd/collective_bytes/reduce_scatter=8,16", at));
  EXPECT_EQ(per_op.sizes_bytes, (std::vector<std::int64_t>{8, 16}));
  EXPECT_EQ(per_op.op, v1::Collective::REDUCE_SCATTER);
  const auto ranks =
      std::get<CollectiveRanksMark>(parse_metadata_mark("ssgd/collective_ranks/reduce=2", at));
  EXPECT_EQ(ranks.op, v1::Collective::REDUCE);
  EXPECT_EQ(ranks.ranks, 2);
  EXPECT_TRUE(ranks.members.empty());
  const auto members = std::get<CollectiveRanksMark>(
      parse_metadata_mark("ssgd/collective_ranks/all_reduce=1,5,9", at));
  EXPECT_EQ(members.ranks, 3);
  EXPECT_EQ(members.members, (std::vector<std::int32_t>{1, 5, 9}));
  const auto u = std::get<UnknownMetadataMark>(parse_metadata_mark("ssgd/batch_size=64", at));
  EXPECT_EQ(u.key, "batch_size");
  EXPECT_EQ(u.value, "64");
}

TEST(MetadataMarks, MalformedMarksAreInputErrors) {
  const InputLocation at{"rank0.json", std::nullopt, 5, ""};
  auto message = [&](const std::string& name) -> std::string {
    try {
      parse_metadata_mark(name, at);
    } catch (const InputError& e) {
      EXPECT_EQ(e.where().file, "rank0.json");
      EXPECT_EQ(e.where().record, 5);
      EXPECT_EQ(e.where().field, "name");
      return e.what();
    }
    ADD_FAILURE() << name << " was accepted";
    return {};
  };
  EXPECT_THAT(message("ssgd/rank"), HasSubstr("no '='"));
  EXPECT_THAT(message("ssgd/rank=two"), HasSubstr("rank 'two' is not a non-negative integer"));
  EXPECT_THAT(message("ssgd/rank=-1"), HasSubstr("not a non-negative integer"));
  EXPECT_THAT(message("ssgd/rank=99999999999"), HasSubstr("out of range"));
  EXPECT_THAT(message("ssgd/world_size=0"), HasSubstr("world size 0"));
  EXPECT_THAT(message("ssgd/grad_bytes=12"), HasSubstr("names no layer"));
  EXPECT_THAT(message("ssgd/grad_bytes/fc=1.5"), HasSubstr("bytes '1.5'"));
  EXPECT_THAT(message("ssgd/activation_bytes=12"), HasSubstr("activation_bytes names no layer"));
  EXPECT_THAT(message("ssgd/activation_bytes/fc=-3"), HasSubstr("not a non-negative integer"));
  EXPECT_THAT(message("ssgd/activation_bytes/fc=1125899906842625"),  // 2^50 + 1
              HasSubstr("out of range"));
  EXPECT_THAT(message("ssgd/collective_bytes=1,,2"), HasSubstr("collective size ''"));
  EXPECT_THAT(message("ssgd/=3"), HasSubstr("no key"));
  EXPECT_THAT(message("ssgd/hostname="), HasSubstr("empty hostname"));
  EXPECT_THAT(message("ssgd/rank=x"), HasSubstr("metadata mark 'ssgd/rank=x'"));
}

TEST(TorchOpNames, BackwardNodesMeetTheirForwardOps) {
  EXPECT_EQ(backward_node_name("autograd::engine::evaluate_function: AddmmBackward0"),
            "AddmmBackward0");
  EXPECT_EQ(backward_node_name("aten::addmm"), std::nullopt);
  EXPECT_EQ(backward_node_key("AddmmBackward0"), forward_op_key("aten::addmm"));
  EXPECT_EQ(backward_node_key("LogSoftmaxBackward0"), forward_op_key("aten::_log_softmax"));
  EXPECT_EQ(backward_node_key("NllLossBackward0"), forward_op_key("aten::nll_loss"));
  EXPECT_EQ(backward_node_key("TBackward0"), forward_op_key("aten::t"));
  EXPECT_EQ(backward_node_key("MaxPool2DWithIndicesBackward0"),
            forward_op_key("aten::max_pool2d_with_indices"));
  EXPECT_EQ(backward_node_key("CloneBackward"), "clone");
  EXPECT_EQ(backward_node_key("torch::autograd::AccumulateGrad"), "");
  EXPECT_TRUE(is_accumulate_grad_node("torch::autograd::AccumulateGrad"));
  EXPECT_FALSE(is_accumulate_grad_node("AddmmBackward0"));
}

TEST(TorchOpNames, RangesOfTheProfilerOptimizerAndModules) {
  EXPECT_TRUE(is_optimizer_step("Optimizer.step#SGD.step"));
  EXPECT_FALSE(is_optimizer_step("Optimizer.zero_grad#SGD.zero_grad"));
  EXPECT_TRUE(is_optimizer_range("Optimizer.zero_grad#SGD.zero_grad"));
  EXPECT_TRUE(is_profiler_step_range("ProfilerStep#3"));
  EXPECT_TRUE(is_autograd_engine_op("autograd::engine::evaluate_function: X"));
  EXPECT_EQ(module_range_name("nn.Module: Linear_0"), "Linear_0");
  EXPECT_EQ(module_range_name("Linear_0"), std::nullopt);
  EXPECT_TRUE(is_legacy_annotation("DistributedDataParallel.forward"));
  EXPECT_TRUE(is_legacy_annotation("forward/l1"));
  EXPECT_FALSE(is_legacy_annotation("aten::linear"));
  EXPECT_FALSE(is_legacy_annotation("torch.distributed.ddp.reducer::copy_bucket_to_grad"));
}

// Both importers (pytorch, nsys) read who the capture is through one
// IdentityMarks: the first rank, world size and host win, a repeat that
// disagrees is noted, the earliest clock mark sets the clock.
TEST(IdentityMarks, TheFirstWinsAndTheEarliestClockSetsIt) {
  const InputLocation at{"rank0.json", std::nullopt, 5, ""};
  IdentityMarks marks;
  int starts_asked = 0;
  auto take = [&](const std::string& name, std::int64_t start) {
    return marks.take(parse_metadata_mark(name, at), name, "event " + std::to_string(start),
                      [&starts_asked, start] {
                        ++starts_asked;
                        return start;
                      });
  };
  EXPECT_TRUE(take("ssgd/rank=1", 10));
  EXPECT_TRUE(take("ssgd/rank=1", 20));
  EXPECT_TRUE(take("ssgd/rank=2", 30));
  EXPECT_TRUE(take("ssgd/world_size=4", 11));
  EXPECT_TRUE(take("ssgd/hostname=h1", 12));
  EXPECT_EQ(starts_asked, 0);  // only a clock mark needs its start
  EXPECT_TRUE(take("ssgd/clock_realtime_ns=5000", 400));
  EXPECT_TRUE(take("ssgd/clock_realtime_ns=4000", 300));  // earlier in the file: it wins
  EXPECT_TRUE(take("ssgd/clock_realtime_ns=9000", 900));
  EXPECT_EQ(starts_asked, 3);
  // The rest is the importer's; an unknown key is noted all the same.
  EXPECT_FALSE(take("ssgd/grad_bytes/fc=64", 13));
  EXPECT_FALSE(take("ssgd/collective_bytes=8,16", 14));
  EXPECT_FALSE(take("ssgd/batch_size=32", 15));

  EXPECT_EQ(marks.rank, 1);
  EXPECT_EQ(marks.world_size, 4);
  EXPECT_EQ(marks.hostname, "h1");
  EXPECT_EQ(marks.clock_realtime_ns, 4000);
  EXPECT_EQ(marks.clock_mark_ns, 300);
  EXPECT_EQ(marks.marks, 11u);
  EXPECT_EQ(marks.unknown_keys, (std::set<std::string>{"batch_size"}));
  ASSERT_EQ(marks.conflicts.size(), 1u);
  EXPECT_EQ(marks.conflicts[0], "ssgd/rank=2 (event 30) disagrees with the first ssgd/rank=1");
  EXPECT_EQ(marks.summary({"grad_bytes of 1 layers"}),
            "11 ssgd/ marks: rank 1, world size 4, host h1, clock, grad_bytes of 1 layers, 1 "
            "unknown key(s)");
  EXPECT_EQ(IdentityMarks{}.summary(), "0 ssgd/ marks: ");
}

}  // namespace
}  // namespace ssgd::trace
