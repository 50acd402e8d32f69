// The pieces of the CPU walk (traces/import/pytorch/cpu_profile_walk.h) on ranges built in
// memory: compute kernels from outermost operators (traces/import/pytorch/cpu_compute.h),
// gloo collectives paired with their c10d calls (traces/import/pytorch/host_collectives.h),
// and a legacy file's layers by backward node names (traces/import/pytorch/legacy_layers.h).
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "traces/import/pytorch/cpu_compute.h"
#include "traces/import/pytorch/cpu_profile_walk.h"
#include "traces/import/pytorch/host_collectives.h"
#include "traces/import/pytorch/legacy_layers.h"

namespace ssgd::trace {
namespace {

using Kind = CpuRange::Kind;

CpuRange op(const std::string& name, std::int64_t start, std::int64_t end, std::uint64_t thread = 1,
            Kind kind = Kind::kOperator) {
  CpuRange r;
  r.kind = kind;
  r.start_ns = start;
  r.end_ns = end;
  r.thread_id = thread;
  r.name = name;
  return r;
}
CpuRange note(const std::string& name, std::int64_t start, std::int64_t end,
              std::uint64_t thread = 1) {
  return op(name, start, end, thread, Kind::kAnnotation);
}
CpuRange comm(const std::string& name, std::int64_t start, std::int64_t end,
              std::uint64_t thread = 1) {
  return op(name, start, end, thread, Kind::kCommunication);
}

struct Collected {
  std::vector<v1::Event> events;
  std::function<void(const v1::Event&)> emit() {
    return [this](const v1::Event& e) { events.push_back(e); };
  }
};

TEST(CpuCompute, OneKernelPerOutermostOperatorOfEachThread) {
  Collected out;
  CpuComputeExtractor c(out.emit());
  for (const auto& r : {note("DistributedDataParallel.forward", 0, 100),  // transparent
                        op("aten::linear", 10, 50), op("aten::t", 11, 13),
                        op("aten::addmm", 14, 51),    // rounded past its parent's end
                        op("aten::add_", 20, 30, 7),  // another thread
                        op("aten::relu", 51, 60),     // starts where linear ended: outermost
                        comm("c10d::allreduce_", 70, 80), op("aten::copy_", 71, 72),
                        op("autograd::engine::evaluate_function: AccumulateGrad", 85, 99),
                        comm("c10d::allreduce_", 86, 88)}) {
    c.add(r);
  }
  c.finish();
  std::vector<std::string> names;
  for (const auto& e : out.events) {
    ASSERT_TRUE(e.has_kernel());
    EXPECT_EQ(e.kernel().device(), -1);
    names.push_back(e.kernel().name() + "@" + std::to_string(e.kernel().stream()));
  }
  EXPECT_EQ(names,
            (std::vector<std::string>{"aten::linear@1", "aten::add_@7", "aten::relu@1",
                                      "autograd::engine::evaluate_function: AccumulateGrad@1"}));
  EXPECT_EQ(out.events[0].kernel().start_ns(), 10);
  EXPECT_EQ(out.events[0].kernel().end_ns(), 50);
  EXPECT_EQ(c.stats().kernels, 4u);
  EXPECT_EQ(c.stats().nested_operators, 2u);     // t, addmm
  EXPECT_EQ(c.stats().under_communication, 1u);  // copy_ inside c10d::allreduce_
}

std::vector<std::pair<std::int64_t, std::int64_t>> spans(const Collected& out) {
  std::vector<std::pair<std::int64_t, std::int64_t>> v;
  for (const auto& e : out.events) v.emplace_back(e.kernel().start_ns(), e.kernel().end_ns());
  return v;
}

constexpr std::int64_t kMs = 1'000'000;

// ZeRO-3's backward pre-hook, as the legacy profiler recorded it on the
// emulated cluster (cpu-sharded-w2, mlp-w2-1gbit-zero3-f1, rank 0): the
// autograd node's range holds 22 ms of the thread waiting for the unit's
// all-gather, which ran on gloo's worker thread, then the hook's own work.
TEST(CpuCompute, AWaitForACollectiveInsideAnOperatorIsCutOut) {
  Collected out;
  CpuComputeExtractor c(out.emit());
  for (const auto& r :
       {comm("gloo:all_gather", -5 * kMs, 22 * kMs, 2),  // prefetched before the node
        op("autograd::engine::evaluate_function: IdentityBackward", 0, 24 * kMs),
        op("aten::zeros", 22 * kMs + kMs / 5, 23 * kMs + kMs / 2),
        op("IdentityBackward", 23 * kMs + 4 * kMs / 5, 24 * kMs)}) {
    c.add(r);
  }
  c.finish();
  EXPECT_EQ(spans(out), (std::vector<std::pair<std::int64_t, std::int64_t>>{{22 * kMs, 24 * kMs}}));
  EXPECT_EQ(c.stats().waits, 1u);
  EXPECT_EQ(c.stats().wait_ns, 22 * kMs);
  EXPECT_EQ(c.stats().operators_cut, 1u);
}

TEST(CpuCompute, AWaitInTheMiddleLeavesThePiecesAroundIt) {
  Collected out;
  CpuComputeExtractor c(out.emit());
  for (const auto& r :
       {op("outer", 0, 20 * kMs), op("aten::mm", 0, 5 * kMs),
        comm("gloo:reduce", 3 * kMs, 14 * kMs, 3), comm("gloo:all_gather", 4 * kMs, 15 * kMs, 2),
        op("aten::add_", 15 * kMs + kMs / 2, 20 * kMs)}) {
    c.add(r);
  }
  c.finish();
  // Waited from the end of aten::mm to the later collective's end.
  EXPECT_EQ(spans(out), (std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 5 * kMs},
                                                                            {15 * kMs, 20 * kMs}}));
  EXPECT_EQ(c.stats().kernels, 2u);
  EXPECT_EQ(c.stats().wait_ns, 10 * kMs);
}

TEST(CpuCompute, WorkThatACollectiveEndsBesideIsNoWait) {
  Collected out;
  CpuComputeExtractor c(out.emit());
  for (const auto& r :
       {// A leaf: its own time is its work, whatever ends inside it.
        op("aten::mm", 0, 30 * kMs), comm("gloo:all_gather", 1 * kMs, 29 * kMs, 2),
        // A stretch no range covers, but the thread goes on long after the end.
        op("outer", 40 * kMs, 70 * kMs), op("aten::t", 40 * kMs, 41 * kMs),
        comm("gloo:reduce", 41 * kMs, 50 * kMs, 3), op("aten::addmm", 60 * kMs, 70 * kMs),
        // Uncovered, but shorter than a wait.
        comm("gloo:reduce", 70 * kMs, 81 * kMs + kMs / 4, 3), op("outer2", 80 * kMs, 90 * kMs),
        op("aten::t", 80 * kMs, 81 * kMs), op("aten::addmm", 81 * kMs + kMs / 3, 90 * kMs),
        // No collective ends in the stretch.
        op("outer3", 100 * kMs, 110 * kMs), op("aten::t", 100 * kMs, 101 * kMs),
        op("aten::addmm", 109 * kMs, 110 * kMs)}) {
    c.add(r);
  }
  c.finish();
  EXPECT_EQ(
      spans(out),
      (std::vector<std::pair<std::int64_t, std::int64_t>>{
          {0, 30 * kMs}, {40 * kMs, 70 * kMs}, {80 * kMs, 90 * kMs}, {100 * kMs, 110 * kMs}}));
  EXPECT_EQ(c.stats().waits, 0u);
}

// An operator that runs past the annotation holding it (the legacy
// profiler's rounding) and the next one, starting before its end: both written.
TEST(CpuCompute, AnOperatorPastItsAnnotationIsWrittenBeforeTheNext) {
  Collected out;
  CpuComputeExtractor c(out.emit());
  for (const auto& r :
       {note("forward/l1", 0, 100), op("aten::linear", 90, 101), op("aten::relu", 100, 120)}) {
    c.add(r);
  }
  c.finish();
  EXPECT_EQ(spans(out),
            (std::vector<std::pair<std::int64_t, std::int64_t>>{{90, 101}, {100, 120}}));
}

// Calls and executions in time order, as the walk hands them over.
HostCollectiveStats match(const std::vector<CpuRange>& ranges, Collected& out,
                          HostCollectiveOptions o = {}) {
  HostCollectiveMatcher m;
  for (const auto& r : ranges) m.add(r);
  if (o.world_size == 0) o.world_size = 2;
  return m.finish(o, out.emit());
}

TEST(HostCollectives, TheKthCallRunsAsTheKthExecutionAcrossOpKinds) {
  Collected out;
  const auto s = match({comm("c10d::broadcast_", 0, 5), comm("c10d::allreduce_", 6, 8),
                        comm("gloo:broadcast", 7, 20, 3), comm("gloo:all_reduce", 21, 40, 2),
                        comm("c10d::allreduce_", 50, 52), comm("gloo:all_reduce", 53, 60, 3)},
                       out);
  EXPECT_EQ(s.collectives, 3u);
  EXPECT_EQ(s.framework_calls, 3u);
  EXPECT_EQ(s.linked, 3u);
  ASSERT_EQ(out.events.size(), 6u);
  // In launch order: each call, then its collective, with one correlation id.
  const auto& call = out.events[0].api_call();
  const auto& run = out.events[1].collective();
  EXPECT_EQ(call.api(), v1::ApiCall::FRAMEWORK);
  EXPECT_EQ(call.name(), "c10d::broadcast_");
  EXPECT_EQ(run.op(), v1::Collective::BROADCAST);
  EXPECT_EQ(run.correlation_id(), call.correlation_id());
  EXPECT_EQ(run.correlation_id(), 1u);
  EXPECT_EQ(run.stream(), 3u);
  EXPECT_EQ(run.device(), -1);
  EXPECT_EQ(run.nranks(), 2);
  EXPECT_EQ(run.sequence_number(), 0u);
  EXPECT_EQ(out.events[3].collective().op(), v1::Collective::ALL_REDUCE);
  EXPECT_EQ(out.events[3].collective().start_ns(), 21);
  EXPECT_EQ(out.events[5].collective().sequence_number(), 2u);
  EXPECT_EQ(out.events[5].collective().correlation_id(), 3u);
}

TEST(HostCollectives, AWindowThatCutsTheQueueLeavesUnpairedEnds) {
  Collected out;
  // An execution whose call was before the profile; a call never run.
  const auto s = match({comm("gloo:all_reduce", 0, 10, 2), comm("c10d::allreduce_", 20, 22),
                        comm("gloo:all_reduce", 23, 30, 2), comm("c10d::allreduce_", 40, 42)},
                       out);
  EXPECT_EQ(s.executions_without_call, 1u);
  EXPECT_EQ(s.calls_without_execution, 1u);
  EXPECT_EQ(s.linked, 1u);
  EXPECT_EQ(s.collectives, 2u);
  EXPECT_EQ(s.framework_calls, 2u);
  EXPECT_EQ(out.events[0].collective().correlation_id(), 0u);
  EXPECT_EQ(out.events.back().api_call().correlation_id(), 0u);
}

TEST(HostCollectives, KindMismatchIsNotLinkedAndBarriersAreNoCollectives) {
  Collected out;
  const auto s = match({comm("c10d::barrier", 0, 2), comm("gloo:barrier", 3, 5, 2),
                        comm("c10d::broadcast_", 10, 12), comm("gloo:all_reduce", 13, 20, 2),
                        comm("c10d::send", 30, 31), comm("c10d::allreduce_", 32, 33),
                        comm("gloo:all_reduce", 34, 40, 2), comm("gloo:send", 35, 36, 1),
                        comm("c10d::broadcast_", 50, 51), comm("gloo:broadcast", 52, 53, 3)},
                       out);
  EXPECT_EQ(s.barriers, 1u);
  EXPECT_EQ(s.kind_mismatches, 1u);
  // send pairs with send although the all-reduce was queued after it.
  EXPECT_EQ(s.linked, 3u);
  EXPECT_EQ(s.collectives, 4u);
  for (const auto& e : out.events) {
    if (e.has_collective() && e.collective().op() == v1::Collective::SEND) {
      EXPECT_NE(e.collective().correlation_id(), 0u);
    }
  }
}

TEST(HostCollectives, CallsOfKindsGlooNeverRanBelongToAnotherBackend) {
  Collected out;
  // NCCL's all-gathers between gloo's all-reduces must not shift the queue.
  const auto s = match({comm("c10d::allgather_", 0, 1), comm("c10d::allreduce_", 2, 3),
                        comm("c10d::allgather_", 4, 5), comm("gloo:all_reduce", 6, 9, 2)},
                       out);
  EXPECT_EQ(s.other_backend_calls, 2u);
  EXPECT_EQ(s.linked, 1u);
  EXPECT_EQ(s.framework_calls, 1u);
  EXPECT_EQ(s.kind_mismatches, 0u);
}

TEST(HostCollectives, RecordedShapesComeBeforeTheMarks) {
  Collected out;
  HostCollectiveOptions o;
  o.iterations = {{0, 100, "iteration/0"}};
  o.size_marks = {{0, {3, 4}, std::nullopt}};
  auto run = comm("gloo:all_reduce", 12, 20, 2);
  run.size_bytes = 1024;
  run.count = 256;
  run.datatype = "float32";
  const auto s = match({comm("c10d::allreduce_", 10, 11), run, comm("c10d::allreduce_", 30, 31),
                        comm("gloo:all_reduce", 32, 40, 2)},
                       out, o);
  EXPECT_EQ(s.sized_from_shapes, 1u);
  EXPECT_EQ(s.sized, 1u);
  std::vector<std::int64_t> sizes;
  for (const auto& e : out.events) {
    if (e.has_collective()) sizes.push_back(e.collective().size_bytes());
  }
  EXPECT_EQ(sizes, (std::vector<std::int64_t>{1024, 4}));
  EXPECT_EQ(out.events[1].collective().count(), 256);
  EXPECT_EQ(out.events[1].collective().datatype(), "float32");
}

TEST(HostCollectives, SizesFromTheLatestMarkBeforeEachIterationsFirstCollective) {
  Collected out;
  HostCollectiveOptions o;
  o.iterations = {{0, 100, "iteration/0"}, {100, 200, "iteration/1"}, {200, 300, "iteration/2"}};
  o.size_marks = {{150, {7, 8}, std::nullopt}, {1, {3, 4}, std::nullopt}};  // any order
  const auto s = match({comm("c10d::allreduce_", 10, 11), comm("gloo:all_reduce", 12, 20, 2),
                        comm("c10d::allreduce_", 30, 31), comm("gloo:all_reduce", 32, 40, 2),
                        // iteration 1: first collective before the second mark -> {3, 4}
                        comm("c10d::allreduce_", 110, 111), comm("gloo:all_reduce", 112, 120, 2),
                        comm("c10d::allreduce_", 160, 161), comm("gloo:all_reduce", 162, 170, 2),
                        // iteration 2: one collective, the mark lists two
                        comm("c10d::allreduce_", 210, 211), comm("gloo:all_reduce", 212, 220, 2)},
                       out, o);
  std::vector<std::int64_t> sizes;
  for (const auto& e : out.events) {
    if (e.has_collective()) sizes.push_back(e.collective().size_bytes());
  }
  EXPECT_EQ(sizes, (std::vector<std::int64_t>{3, 4, 3, 4, 0}));
  EXPECT_EQ(s.sized, 4u);
  ASSERT_EQ(s.size_mismatches.size(), 1u);
  EXPECT_EQ(s.size_mismatches[0],
            "iteration/2: 1 collective(s), its ssgd/collective_bytes mark lists 2");
}

TEST(HostCollectives, IterationsBeforeEveryMarkStayUnsized) {
  Collected out;
  HostCollectiveOptions o;
  o.iterations = {{0, 100, "iteration/0"}};
  o.size_marks = {{50, {3}, std::nullopt}};
  const auto s =
      match({comm("c10d::allreduce_", 10, 11), comm("gloo:all_reduce", 12, 20, 2)}, out, o);
  EXPECT_EQ(s.iterations_without_size_mark, 1u);
  EXPECT_EQ(s.sized, 0u);
}

// Two process groups: the all-reduce on its own group (an
// ssgd/collective_ranks/all_reduce mark of 2 ranks in a world of 4) runs
// before the all-gather queued ahead of it on the world; each op pairs
// among its own, and gets its group's ranks and a communicator of its own.
TEST(HostCollectives, AnOpOnAGroupOfItsOwnPairsInItsOwnQueue) {
  Collected out;
  HostCollectiveOptions o;
  o.rank = 3;
  o.world_size = 4;
  o.iterations = {{0, 100, "iteration/0"}};
  o.group_marks = {{1, v1::Collective::ALL_REDUCE, 2}};
  const auto s = match({comm("c10d::allgather_", 10, 11), comm("c10d::allreduce_", 20, 21),
                        comm("gloo:all_reduce", 22, 30, 3), comm("gloo:all_gather", 31, 40, 2)},
                       out, o);
  EXPECT_EQ(s.linked, 2u);
  EXPECT_EQ(s.kind_mismatches, 0u);
  std::map<int, v1::Collective> by_op;
  for (const auto& e : out.events) {
    if (e.has_collective()) by_op[e.collective().op()] = e.collective();
  }
  const auto& gather = by_op.at(v1::Collective::ALL_GATHER);
  const auto& reduce = by_op.at(v1::Collective::ALL_REDUCE);
  EXPECT_EQ(gather.nranks(), 4);
  EXPECT_EQ(gather.rank(), 3);
  EXPECT_EQ(reduce.nranks(), 2);
  EXPECT_EQ(reduce.rank(), 1);
  EXPECT_NE(gather.communicator_id(), reduce.communicator_id());
  EXPECT_EQ(gather.sequence_number(), 0u);
  EXPECT_EQ(reduce.sequence_number(), 0u);
  EXPECT_EQ(s.grouped.at("all_reduce over 2 ranks"), 1u);
  // Without the mark, one queue: the all-gather's call takes the all-reduce's run.
  Collected one;
  o.group_marks.clear();
  EXPECT_EQ(match({comm("c10d::allgather_", 10, 11), comm("c10d::allreduce_", 20, 21),
                   comm("gloo:all_reduce", 22, 30, 3), comm("gloo:all_gather", 31, 40, 2)},
                  one, o)
                .kind_mismatches,
            2u);
}

// One iteration of a legacy file's forward thread: fc (linear > t, addmm),
// act (relu), loss (cross_entropy_loss > log_softmax > _log_softmax,
// nll_loss), then the nodes in reverse creation order.
std::vector<CpuRange> legacy_iteration() {
  return {note("DistributedDataParallel.forward", 0, 100),
          op("aten::zeros", 1, 2),  // bookkeeping: makes no node
          op("aten::linear", 10, 40),
          op("aten::t", 11, 12),
          op("aten::transpose", 11, 12),
          op("aten::addmm", 13, 39),
          op("aten::relu", 41, 50),
          op("aten::clamp_min", 42, 49),
          op("aten::cross_entropy_loss", 110, 130),
          op("aten::log_softmax", 111, 115),
          op("aten::_log_softmax", 112, 114),
          op("aten::nll_loss", 116, 129),
          op("autograd::engine::evaluate_function: NllLossBackward0", 140, 145),
          op("NllLossBackward0", 141, 144, 1, Kind::kAnnotation),
          op("autograd::engine::evaluate_function: LogSoftmaxBackward0", 146, 150),
          op("autograd::engine::evaluate_function: ReluBackward0", 151, 160),
          op("autograd::engine::evaluate_function: AddmmBackward0", 161, 190),
          op("autograd::engine::evaluate_function: torch::autograd::AccumulateGrad", 191, 195),
          op("autograd::engine::evaluate_function: TBackward0", 196, 197),
          op("autograd::engine::evaluate_function: CloneBackward0", 198, 199),  // no clone
          note("Optimizer.step#SGD.step", 200, 220),
          op("aten::add_", 201, 202)};
}

TEST(LegacyLayers, BackwardNodesMatchForwardOperatorsInReverse) {
  Collected out;
  LegacyLayerAligner a(out.emit(), "test");
  a.iteration(legacy_iteration(), 1);
  std::vector<std::string> marks;
  for (const auto& e : out.events) {
    marks.push_back(e.marker().name() + " " + std::to_string(e.marker().start_ns()));
    EXPECT_EQ(e.marker().domain(), "test");
  }
  EXPECT_EQ(marks, (std::vector<std::string>{
                       "forward/aten::linear#0 10", "backward/aten::linear#0 161",
                       "backward/aten::linear#0 196", "forward/aten::relu#1 41",
                       "backward/aten::relu#1 151", "forward/aten::cross_entropy_loss#2 110",
                       "backward/aten::cross_entropy_loss#2 140",
                       "backward/aten::cross_entropy_loss#2 146"}));
  const auto s = a.stats();
  EXPECT_EQ(s.layers, 3u);
  EXPECT_EQ(s.backward_unmatched, 1u);  // CloneBackward0
  EXPECT_EQ(s.accumulate_grad, 1u);
  EXPECT_EQ(s.forward_ops_without_backward, 1u);  // aten::zeros
}

TEST(LegacyLayers, OperatorsOfOtherThreadsAndOfTheOptimizerAreNoLayers) {
  Collected out;
  LegacyLayerAligner a(out.emit(), "test");
  auto ranges = legacy_iteration();
  for (auto& r : ranges) {
    if (r.name == "aten::relu" || r.name == "aten::clamp_min") r.thread_id = 9;
  }
  a.iteration(ranges, 1);
  const auto s = a.stats();
  EXPECT_EQ(s.layers, 2u);
  EXPECT_EQ(s.backward_unmatched, 2u);  // ReluBackward0, CloneBackward0
}

TEST(CpuProfileWalk, OptimizerStepsEndIterations) {
  const auto dir = std::filesystem::temp_directory_path() / "ssgd_cpu_walk_steps";
  Collected out;
  CpuWalkStats s;
  {
    CpuProfileWalk walk(dir, 1 << 20);
    // Two iterations in reverse order: the walk sorts.
    for (int i = 1; i >= 0; --i) {
      for (auto r : legacy_iteration()) {
        r.start_ns += 1000 * i;
        r.end_ns += 1000 * i;
        walk.add(r);
      }
    }
    walk.add(op("aten::mul", 1500, 1501));  // after the last step: no iteration
    CpuWalkOptions o;
    o.compute = true;
    o.iterations_from_steps = true;
    o.legacy_layers = true;
    s = walk.walk(o, out.emit());
  }
  EXPECT_EQ(s.optimizer_steps, 2u);
  EXPECT_EQ(s.step_iterations, 2u);
  ASSERT_EQ(s.step_spans.size(), 2u);
  EXPECT_EQ(s.step_spans[0].start_ns, 0);
  EXPECT_EQ(s.step_spans[0].end_ns, 220);
  EXPECT_EQ(s.step_spans[1].start_ns, 220);
  EXPECT_EQ(s.step_spans[1].end_ns, 1220);
  EXPECT_EQ(s.layers.layers, 3u);
  EXPECT_EQ(s.layers.forward_ranges, 6u);
  EXPECT_EQ(s.layers.iterations, 2u);
  EXPECT_EQ(s.compute.kernels, 2u * 12u + 1u);
  std::vector<std::string> iterations;
  for (const auto& e : out.events) {
    if (e.has_marker() && e.marker().name().rfind("iteration/", 0) == 0) {
      iterations.push_back(e.marker().name());
    }
  }
  EXPECT_EQ(iterations, (std::vector<std::string>{"iteration/0", "iteration/1"}));
}

}  // namespace
}  // namespace ssgd::trace
