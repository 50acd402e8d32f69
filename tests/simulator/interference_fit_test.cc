// The interference factors fitted on traces (simulator/calibration/
// interference_fit.h): synthetic captures whose factors are known exactly
// (a GPU's SM-bound and memory-bound kernels and a collective, alone in some
// iterations and overlapped in others; a host's operators across two
// captures), the rules (innermost operators only, names matched per
// iteration, a collective timed from its last rank's arrival), the refusals,
// and the fit on the emulated cluster's captures (docs/validation.md).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "common/error.h"
#include "simulator/calibration/band_fit.h"
#include "simulator/calibration/interference_fit.h"
#include "simulator/calibration/network_calibration.h"
#include "tests/support/synthetic_trace.h"
#include "tests/support/test_files.h"
#include "traces/trace_writer.h"

namespace ssgd::sim {
namespace {

namespace v1 = trace::v1;
using ::testing::HasSubstr;

v1::Event kernel(std::int32_t rank, const std::string& name, std::int32_t device,
                 std::uint32_t stream, std::int64_t start, std::int64_t end) {
  v1::Event e;
  e.set_rank(rank);
  v1::Kernel* k = e.mutable_kernel();
  k->set_name(name);
  k->set_device(device);
  k->set_stream(stream);
  k->set_start_ns(start);
  k->set_end_ns(end);
  return e;
}

v1::Event collective(std::int32_t rank, std::int64_t start, std::int64_t end) {
  v1::Event e;
  e.set_rank(rank);
  v1::Collective* c = e.mutable_collective();
  c->set_op(v1::Collective::ALL_REDUCE);
  c->set_nranks(2);
  c->set_size_bytes(1 << 20);
  c->set_start_ns(start);
  c->set_end_ns(end);
  return e;
}

v1::Event iteration(std::int32_t rank, std::int64_t n, std::int64_t start, std::int64_t end) {
  v1::Event e;
  e.set_rank(rank);
  v1::MarkerRange* m = e.mutable_marker();
  m->set_name("iteration/" + std::to_string(n));
  m->set_start_ns(start);
  m->set_end_ns(end);
  return e;
}

constexpr std::int64_t kIteration = 100'000;

class InterferenceFitTest : public ssgd::testing::TempDirTest {
 protected:
  std::filesystem::path write(const std::string& name, const std::vector<v1::Event>& events) {
    return ssgd::testing::write_synthetic_trace(dir_ / name, events, "interference_fit_test", 16);
  }

  // Six iterations of rank 0 on a GPU: a GEMM (1000 ns alone) then an
  // elementwise kernel (400 ns alone); a 1 MiB all-reduce (2000 ns alone)
  // later in the iteration in the first four, over both kernels in the last
  // two, where the GEMM takes 1250 ns (f = 0.25), the elementwise kernel
  // 600 ns (f = 0.5) and the all-reduce 2400 ns.
  std::vector<v1::Event> gpu_capture() {
    std::vector<v1::Event> ev;
    for (int i = 0; i < 6; ++i) {
      const std::int64_t t = i * kIteration;
      ev.push_back(iteration(0, i, t, t + kIteration));
      const bool overlapped = i >= 4;
      const std::int64_t gemm = overlapped ? 1250 : 1000;
      const std::int64_t elem = overlapped ? 600 : 400;
      ev.push_back(kernel(0, "ampere_sgemm_128x64_nn", 0, 7, t + 100, t + 100 + gemm));
      ev.push_back(kernel(0, "void at::native::vectorized_elementwise_kernel<4>", 0, 7,
                          t + 100 + gemm, t + 100 + gemm + elem));
      if (overlapped) {
        ev.push_back(collective(0, t + 100, t + 2500));
      } else {
        ev.push_back(collective(0, t + 50'000, t + 52'000));
      }
    }
    return ev;
  }
};

TEST_F(InterferenceFitTest, GpuKernelsAndTheCollectiveGiveTheirFactors) {
  const InterferenceFit f = fit_interference({write("gpu.ssgdt", gpu_capture())});
  EXPECT_TRUE(f.gpu);
  ASSERT_TRUE(f.compute && f.memory && f.comm);
  EXPECT_NEAR(f.compute->median, 0.25, 1e-9);
  EXPECT_EQ(f.compute->samples, 2);
  EXPECT_EQ(f.compute->names, 1);
  EXPECT_NEAR(f.memory->median, 0.5, 1e-9);
  // The all-reduce: 2400 ns, 1850 of them beside the kernels; alone 2000:
  // 2000 = 550 + 1850 / (1 + f).
  EXPECT_NEAR(f.comm->median, 1850.0 / 1450.0 - 1, 1e-9);
  EXPECT_EQ(f.compute->alone_spread, 0);
  EXPECT_TRUE(f.notes.empty());
}

// One piece of work is a kernel's name at its launch shape in the iteration
// whose host code launched it. Here each iteration launches a GEMM (1000 ns
// alone, 1250 ns beside the all-reduce in the last two: +25%) that the GPU
// runs in the same iteration's window in even iterations and after the next
// iteration's mark in odd ones, and later a GEMM of the same name at another
// shape (600 ns, always alone). Placed by their launches and told apart by
// their shapes, the first gives +25% from its two overlapped records; by
// their start and name alone, the k-th GEMM of a window would be now one
// kernel, now the other.
TEST_F(InterferenceFitTest, AKernelIsItsNameAtItsShapeInTheIterationThatLaunchedIt) {
  const auto launch = [](std::int64_t at, std::uint64_t id) {
    v1::Event e;
    e.set_rank(0);
    v1::ApiCall* a = e.mutable_api_call();
    a->set_api(v1::ApiCall::RUNTIME);
    a->set_name("cudaLaunchKernel");
    a->set_start_ns(at);
    a->set_end_ns(at + 5);
    a->set_correlation_id(id);
    return e;
  };
  const auto gemm = [](std::int64_t start, std::int64_t end, std::uint64_t id, int grid) {
    v1::Event e = kernel(0, "ampere_sgemm_128x64_nn", 0, 7, start, end);
    v1::Kernel* k = e.mutable_kernel();
    k->set_correlation_id(id);
    k->set_grid_x(grid);
    k->set_grid_y(1);
    k->set_grid_z(1);
    k->set_block_x(256);
    k->set_block_y(1);
    k->set_block_z(1);
    return e;
  };
  std::vector<v1::Event> ev;
  std::uint64_t id = 0;
  for (int i = 0; i < 6; ++i) {
    const std::int64_t t = i * kIteration;
    ev.push_back(iteration(0, i, t, t + kIteration));
    const bool overlapped = i >= 4;
    const std::int64_t x =
        i % 2 == 0 ? t + 200 : t + kIteration + 5000;  // odd: after the next mark
    ev.push_back(launch(t + 100, ++id));
    ev.push_back(gemm(x, x + (overlapped ? 1250 : 1000), id, 80));
    ev.push_back(overlapped ? collective(0, x - 100, x + 2400)
                            : collective(0, t + 70'000, t + 72'000));
    ev.push_back(launch(t + 50'000, ++id));
    ev.push_back(gemm(t + 50'100, t + 50'700, id, 20));
    if (i % 2 == 1) {  // odd iterations launch one more, first
      ev.push_back(launch(t + 10, ++id));
      ev.push_back(gemm(t + 20, t + 90, id, 40));
    }
  }
  const InterferenceFit f = fit_interference({write("launched.ssgdt", ev)});
  ASSERT_TRUE(f.compute);
  EXPECT_NEAR(f.compute->median, 0.25, 1e-9);
  EXPECT_EQ(f.compute->samples, 2);
  EXPECT_EQ(f.compute->names, 1);
  EXPECT_EQ(f.compute->alone_spread, 0);
}

// A kernel name that runs faster beside the collective than alone is not one
// piece of work (the same name at other shapes in forward and backward):
// its median, below 0 by more than the names vary alone, is said to measure
// nothing; one below 0 within that spread is noise. Both are written as 0.
TEST_F(InterferenceFitTest, AFactorBelowZeroIsSaidToMeasureNothing) {
  std::vector<v1::Event> ev;
  for (int i = 0; i < 6; ++i) {
    const std::int64_t t = i * kIteration;
    ev.push_back(iteration(0, i, t, t + kIteration));
    const bool overlapped = i >= 4;
    const std::int64_t gemm = overlapped ? 400 : 1000;         // -60%
    const std::int64_t elem = overlapped ? 400 : 400 + 4 * i;  // alone 400-412: -1.5%
    ev.push_back(kernel(0, "ampere_sgemm_128x64_nn", 0, 7, t + 100, t + 100 + gemm));
    ev.push_back(kernel(0, "void at::native::vectorized_elementwise_kernel<4>", 0, 7,
                        t + 100 + gemm, t + 100 + gemm + elem));
    ev.push_back(overlapped ? collective(0, t + 100, t + 2500)
                            : collective(0, t + 50'000, t + 52'000));
  }
  const InterferenceFit f = fit_interference({write("faster.ssgdt", ev)});
  ASSERT_TRUE(f.compute && f.memory);
  EXPECT_NEAR(f.compute->median, -0.6, 1e-9);
  EXPECT_LT(f.memory->median, 0);
  EXPECT_LT(-f.memory->median, f.memory->alone_spread);
  std::string notes;
  for (const auto& n : f.notes) notes += n + "\n";
  EXPECT_THAT(notes, HasSubstr("gpu.compute: -60.0%, faster beside the other kind than alone by "
                               "more than the spread it stands against (0.0%): written as 0, but "
                               "no interference explains it"));
  EXPECT_THAT(notes, HasSubstr("(faster beside the other kind), within the spread it stands "
                               "against"));
  EXPECT_THAT(notes, HasSubstr("noise, written as 0"));
}

// A host capture with overlap off (operators alone) and one with overlap on
// (the same operators beside the all-reduce, 30% slower), an outer operator
// holding each: only the inner ones count, matched per iteration.
TEST_F(InterferenceFitTest, HostOperatorsAcrossTwoCapturesInnermostOnly) {
  const auto capture = [&](bool overlap) {
    std::vector<v1::Event> ev;
    for (int i = 0; i < 4; ++i) {
      const std::int64_t t = i * kIteration;
      ev.push_back(iteration(0, i, t, t + kIteration));
      const std::int64_t mm = overlap ? 13'000 : 10'000;
      // The outer range takes as long either way: were it counted, it would
      // pull the factor to 0.
      ev.push_back(kernel(0, "aten::linear", -1, 1, t + 1000, t + 1000 + 20'000));
      ev.push_back(kernel(0, "aten::mm", -1, 1, t + 1000, t + 1000 + mm));
      if (overlap) {
        ev.push_back(collective(0, t + 500, t + 30'000));
      } else {
        ev.push_back(collective(0, t + 40'000, t + 60'000));
      }
      // Communication's own host ranges are never compute.
      ev.push_back(kernel(0, "c10d::allreduce_", -1, 1, t + 30'000, t + 30'100));
    }
    return ev;
  };
  const InterferenceFit f =
      fit_interference({write("on.ssgdt", capture(true)), write("off.ssgdt", capture(false))});
  EXPECT_FALSE(f.gpu);
  ASSERT_TRUE(f.compute);
  EXPECT_NEAR(f.compute->median, 0.3, 1e-9);
  EXPECT_EQ(f.compute->samples, 4);
  EXPECT_EQ(f.compute_records, 8);  // aten::mm in 2 x 4 iterations
  // The CPU a byte (model demand): mm lost 0.3 / 1.3 of the CPU while the
  // all-reduce moved 4 (2 - 1) / 2 MiB through the rank in 29,500 ns.
  ASSERT_TRUE(f.cpu_per_byte);
  EXPECT_NEAR(f.cpu_per_byte->median, (0.3 / 1.3) / (2.0 * (1 << 20) / 29'500), 1e-12);
  EXPECT_EQ(f.cpu_per_byte->samples, 4);
  EXPECT_FALSE(f.memory);
  // No all-reduce of the size ran both alone and beside compute.
  EXPECT_FALSE(f.comm);
  EXPECT_THAT(f.notes.back(), HasSubstr("comm: no collective"));
}

// Rank 1 joins each all-reduce 300 ns late: rank 0's records are timed from
// then, so its wait is not taken for interference.
TEST_F(InterferenceFitTest, ACollectiveIsTimedFromItsLastRanksArrival) {
  std::vector<v1::Event> ev = gpu_capture();
  const std::size_t n = ev.size();
  for (std::size_t k = 0; k < n; ++k) {
    v1::Event other = ev[k];
    other.set_rank(1);
    if (other.has_collective()) {
      other.mutable_collective()->set_start_ns(other.collective().start_ns() + 300);
    }
    ev.push_back(other);
  }
  const InterferenceFit f = fit_interference({write("two.ssgdt", ev)});
  ASSERT_TRUE(f.comm);
  EXPECT_EQ(f.ranks, 2);
  // Both ranks' records run from the later start: alone 1700, overlapped
  // 2100 of which 1550 beside compute: 1700 = 550 + 1550 / (1 + f).
  EXPECT_NEAR(f.comm->median, 1550.0 / 1150.0 - 1, 1e-9);
}

TEST_F(InterferenceFitTest, RefusesATraceWithoutCollectivesNamingIt) {
  std::vector<v1::Event> ev;
  for (const auto& e : gpu_capture()) {
    if (!e.has_collective()) ev.push_back(e);
  }
  const auto path = write("alone.ssgdt", ev);
  try {
    (void)fit_interference({path});
    FAIL() << "expected a refusal";
  } catch (const InputError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("alone.ssgdt"));
    EXPECT_THAT(std::string(e.what()), HasSubstr("no collective records"));
  }
}

TEST_F(InterferenceFitTest, SaysWhatItCouldNotMeasure) {
  // Every kernel overlapped: nothing alone to compare with.
  std::vector<v1::Event> ev;
  for (int i = 0; i < 4; ++i) {
    const std::int64_t t = i * kIteration;
    ev.push_back(iteration(0, i, t, t + kIteration));
    ev.push_back(kernel(0, "ampere_sgemm_128x64_nn", 0, 7, t + 100, t + 1100));
    ev.push_back(collective(0, t, t + 5000));
  }
  const InterferenceFit f = fit_interference({write("always.ssgdt", ev)});
  EXPECT_FALSE(f.compute);
  EXPECT_FALSE(f.memory);
  EXPECT_THAT(f.notes.front(), HasSubstr("SM-bound compute: no kernel ran both alone"));
}

// Two ranks, four iterations: an operator, then three 1 MiB all-reduces
// issued together, which a library with two worker threads runs as two at
// once (6000 ns each) and the third after them (5000 ns): a busy period of
// 11,000 ns. The calibration has the all-reduce at a = 2000 ns alone, so one
// at a time they would take 6000; the two that start with another waiting
// take 1 + f times their time: 11000 = 3 a + 2 a f, f = 1.25.
TEST_F(InterferenceFitTest, ConcurrentCollectivesAgainstOneAtATime) {
  const auto cal_path = dir_ / "cal.yaml";
  {
    std::ofstream out(cal_path);
    out << "ssgd_network_calibration: 1\nlevel: inter_node\ncollectives:\n"
           "  - op: all_reduce\n    algorithm: ring\n    ranks: [2]\n    bands:\n"
           "      - {max_bytes: inf, latency: 500ns, bandwidth: 1048.576GB/s}\n";
  }
  const NetworkCalibration cal = read_network_calibration(cal_path);
  const CalibratedCollective* fitted = cal.find(CollectiveOp::kAllReduce, 2);
  ASSERT_NE(fitted, nullptr);
  const double a = static_cast<double>(predict(*fitted, 2, 1 << 20).ns());
  std::vector<v1::Event> ev;
  for (std::int32_t rank = 0; rank < 2; ++rank) {
    for (int i = 0; i < 4; ++i) {
      const std::int64_t t = i * kIteration;
      ev.push_back(iteration(rank, i, t, t + kIteration));
      ev.push_back(kernel(rank, "aten::mm", -1, 1, t + 1000, t + 11'000));
      ev.push_back(collective(rank, t + 20'000, t + 26'000));
      ev.push_back(collective(rank, t + 20'000, t + 26'000));
      ev.push_back(collective(rank, t + 26'000, t + 31'000));
      // Alone, later: a period of one, which says nothing of concurrency.
      ev.push_back(collective(rank, t + 50'000, t + 52'000));
    }
  }
  const InterferenceFit f = fit_interference({write("queued.ssgdt", ev)}, false, &cal);
  ASSERT_TRUE(f.concurrent);
  EXPECT_NEAR(f.concurrent->median, (11'000 - 3 * a) / (2 * a), 1e-9);
  EXPECT_EQ(f.concurrent->samples, 8);  // a period a rank an iteration
  EXPECT_EQ(f.concurrent_collectives, 24);
  // Compute covering a period: left out, and said.
  std::vector<v1::Event> busy = ev;
  for (std::int32_t rank = 0; rank < 2; ++rank) {
    for (int i = 0; i < 4; ++i) {
      const std::int64_t t = i * kIteration;
      busy.push_back(kernel(rank, "aten::add", -1, 2, t + 19'000, t + 32'000));
    }
  }
  const InterferenceFit g = fit_interference({write("busy.ssgdt", busy)}, false, &cal);
  EXPECT_FALSE(g.concurrent);
  EXPECT_THAT(::testing::PrintToString(g.notes),
              HasSubstr("concurrent: 24 collective(s) left out"));
}

// The emulated cluster (traces/datasets/cpu-cluster): the mlp at 1 Gbit/s,
// DDP with 25 MiB buckets against overlap off. Its operators ran 21% slower
// beside gloo's all-reduce (docs/validation.md, section 14); held loosely.
TEST(InterferenceFitCapture, EmulatedClusterMlpAt1Gbit) {
  const std::string d = std::string(SSGD_SOURCE_DIR) + "/traces/datasets/cpu-cluster/configs/";
  const InterferenceFit f = fit_interference(
      {d + "mlp-w2-1gbit-b25/trace.ssgdt", d + "mlp-w2-1gbit-nooverlap/trace.ssgdt"});
  EXPECT_FALSE(f.gpu);
  ASSERT_TRUE(f.compute);
  EXPECT_GT(f.compute->median, 0.10);
  EXPECT_LT(f.compute->median, 0.35);
}

// First principles for host.concurrent: collectives that share a link they
// saturate take together what they take one after the other, so where the
// link bounds them (200 Mbit/s, traces/datasets/cpu-cluster) the factor is
// about 0; where the CPU does (the loopback, cpu-partitions, two cores a
// rank for the training thread and gloo's threads) it is about 3
// (docs/validation.md, section 14).
TEST(InterferenceFitCapture, ConcurrentCollectivesCostNothingExtraOnTheLinkThatBoundsThem) {
  const std::string root = std::string(SSGD_SOURCE_DIR) + "/traces/datasets/";
  const NetworkCalibration slow =
      read_network_calibration(root + "cpu-cluster/network/200mbit-w2/calibration.yaml");
  for (const std::string model : {"mlp", "transformer"}) {
    SCOPED_TRACE(model);
    const InterferenceFit f = fit_interference(
        {root + "cpu-cluster/configs/" + model + "-w2-200mbit-b2/trace.ssgdt"}, false, &slow);
    ASSERT_TRUE(f.concurrent);
    EXPECT_GE(f.concurrent->samples, 10);
    EXPECT_LT(std::abs(f.concurrent->median), 0.05);
  }
  const NetworkCalibration loopback =
      read_network_calibration(root + "cpu-partitions/network/unshaped-w2/calibration.yaml");
  const InterferenceFit cpu = fit_interference(
      {root + "cpu-partitions/configs/mlp-w2-unshaped-b2-p64/trace.ssgdt"}, false, &loopback);
  ASSERT_TRUE(cpu.concurrent);
  EXPECT_GT(cpu.concurrent->median, 2.0);
  EXPECT_LT(cpu.concurrent->median, 4.0);
}

}  // namespace
}  // namespace ssgd::sim
