// Issue 32's validation of NCCL's communicator model (simulator/nccl) on the
// presets against published nccl-tests all-reduce curves of multi-node
// clusters (docs/validation.md, section 11). The measurements are others',
// copied with their sources; busbw in GB/s as nccl-tests prints it,
// out-of-place unless said. Each case runs the scenario a user would write
// (platform.preset, cluster.nodes, the run's NCCL_ALGO / NCCL_MIN_CTAS as
// network.nccl_algo / network.channels) through the same CommModel a replay
// uses, prints predicted against measured, and holds the per-case median and
// worst |error| at what the model reaches now (so that a change for the worse
// fails here), and at the targets (median 10%, worst 25%) where they
// are met.
//
// Sources:
//  A1  NVIDIA/nccl-tests issue 309, opening post (2 nodes, bare metal) and
//      comment of 2025-05-23 (4 nodes, VMware VMs): Dell XE9680, 8 x H100
//      SXM, 8 x ConnectX-7 NDR 400 a node, NCCL 2.26.2, default algorithm.
//  A2  the same thread, comments of 2025-06-18 (user gj-aion): 8 x H100, 8 x
//      400G IB a node; default on 2, 4 and 8 nodes; NCCL_ALGO=Ring
//      NCCL_MIN_CTAS=24 on 2 nodes; NCCL_MIN_CTAS=24 on 8 nodes.
//  A6  NVIDIA/nccl-tests issue 322, opening post: 128 nodes x 8 H100, RoCE
//      (NIC count not stated; 8 a node assumed), NCCL_ALGO=Ring
//      NCCL_PROTO=LL128 NCCL_MIN_NCHANNELS=32. Its 1 and 2 GiB rows take 19-20
//      ms, as long as 2 GiB's: a fixed cost of the run, not of the
//      collective; they are shown and left out.
//  B3  microsoft/mscclpp docs/performance-ndmv4.md: Azure NDmv4, 8 x A100
//      80GB, 8 x HDR 200 a node, NCCL 2.17.1, in-place, 2 nodes.
//  B2  ABCI user guide, tips/sharp.md (aistabci/abci-docs): 8 x A100 40GB, 4 x
//      HDR 200 a node, NCCL 2.8 with CollNet (SHARP), 2 nodes.
//  A3  coreweave/nccl-tests README at fb4787c (2023-06-15): 8 nodes x 8 H100,
//      8 x 400G IB a node, NCCL_ALGO=COLLNETCHAIN with SHARP, 512 MiB-8 GiB.
//  B4  coreweave/nccl-tests README at 8834b71: 16 nodes x 8 A100 80GB, SHARP
//      on (SuperPOD design: 8 x HDR a node assumed), 512 MiB-8 GiB.
//  E2  togethercomputer/together-nccl-tests, baselines/flapping-airplanes/
//      2026-05-12_nccl_collective_scaling_report.md: 8 x B200, 8 x NDR 400 a
//      node, NCCL 2.28.9, each algorithm forced; peak busbw at 32 GiB.
//  F1  Azure/AI-benchmarking-guide, Azure_Results/ND_H100_v5_results.md and
//      ND_A100_v4_results.md: one node, in-place, NCCL 2.18.5, default.
//  F2  togethercomputer/together-nccl-tests, benchmarks/H100/results/
//      20260305_220043/all_reduce_ring.out: one H100 node, NCCL_ALGO=Ring,
//      NCCL 2.26.2.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "simulator/api/nic_fit.h"
#include "simulator/calibration/fit_error.h"
#include "simulator/collective/collective.h"
#include "simulator/input/scenario_inputs.h"
#include "simulator/scenario/scenario_network.h"

namespace ssgd::sim {
namespace {

constexpr double kMiB = 1 << 20;
constexpr double kGiB = 1 << 30;

struct Point {
  double bytes;
  double busbw;         // GB/s
  bool suspect = false;  // shown, not counted (the case says why)
};

struct Case {
  std::string name;
  std::vector<std::string> sets;
  std::vector<Point> points;
  double median_at_most;  // what the model reaches now, with a margin
  double worst_at_most;
};

// The busbw sizes of a curve from 1 MiB by factors of 2.
std::vector<Point> from_1mib(std::initializer_list<double> busbw) {
  std::vector<Point> out;
  double bytes = kMiB;
  for (const double b : busbw) {
    out.push_back({bytes, b});
    bytes *= 2;
  }
  return out;
}

const std::vector<Case>& cases() {
  static const std::vector<Case> all = [] {
    std::vector<Case> c;
    c.push_back({"A1 HGX H100, 8 x NDR, 2 nodes, default",
                 {"platform.preset=hgx_h100", "cluster.nodes=2"},
                 from_1mib({27.33, 51.58, 83.33, 118.57, 169.67, 234.81, 269.98, 336.29, 392.35, 426.97,
                            448.90, 461.24, 466.52, 468.46}),
                 0.03, 0.23});
    Case a1_4n{"A1 HGX H100, 8 x NDR, 4 nodes (VMs), default",
               {"platform.preset=hgx_h100", "cluster.nodes=4"},
               from_1mib({24.73, 21.24, 53.77, 74.78, 125.23, 172.92, 224.53, 262.48, 294.16, 334.58, 358.14,
                          361.56, 363.54, 364.93}),
               0.05, 0.30};
    a1_4n.points[1].suspect = true;  // 2 MiB below 1 MiB's busbw: a glitch of the run
    c.push_back(a1_4n);
    Case a2_2n{"A2 H100, 8 x 400G IB, 2 nodes, default",
               {"platform.preset=hgx_h100", "cluster.nodes=2"},
               from_1mib({21.08, 41.73, 70.91, 103.78, 156.07, 228.91, 263.66, 335.25, 388.31, 423.57, 447.65,
                          459.29, 465.77, 466.73}),
               0.03, 0.46};
    c.push_back(a2_2n);
    c.push_back({"A2 H100, 8 x 400G IB, 2 nodes, NCCL_ALGO=Ring NCCL_MIN_CTAS=24",
                 {"platform.preset=hgx_h100", "cluster.nodes=2", "network.nccl_algo=ring", "network.channels=24"},
                 from_1mib({12.53, 25.10, 44.15, 88.44, 157.83, 229.42, 290.04, 316.24, 371.22, 379.87, 384.49,
                            389.40, 391.39, 392.69}),
                 0.09, 0.96});
    Case a2_4n{"A2 H100, 8 x 400G IB, 4 nodes, default",
               {"platform.preset=hgx_h100", "cluster.nodes=4"},
               from_1mib({6.41, 17.91, 35.13, 68.01, 106.75, 157.14, 208.34, 246.41, 234.35, 288.88, 322.02,
                          322.71, 324.99, 324.52}),
               0.17, 1.30};
    a2_4n.points[0].suspect = true;  // 1 MiB at a third of 2 MiB's busbw (the thread calls it an outlier)
    c.push_back(a2_4n);
    Case a2_8n{"A2 H100, 8 x 400G IB, 8 nodes, default",
               {"platform.preset=hgx_h100", "cluster.nodes=8"},
               from_1mib({17.64, 28.78, 40.52, 12.98, 87.36, 129.63, 184.00, 227.97, 270.31, 300.51, 286.81,
                          319.03, 319.83, 320.70}),
               0.18, 0.47};
    a2_8n.points[3].suspect = true;  // 8 MiB at 13 GB/s between 40 and 87 (the thread's outlier)
    c.push_back(a2_8n);
    Case a2_8t{"A2 H100, 8 x 400G IB, 8 nodes, NCCL_MIN_CTAS=24",
               {"platform.preset=hgx_h100", "cluster.nodes=8", "network.channels=24"},
               from_1mib({16.26, 32.81, 45.64, 18.58, 64.71, 106.34, 148.16, 189.36, 240.29, 273.19, 374.81,
                          385.17, 386.42, 391.37}),
               0.25, 0.56};
    a2_8t.points[3].suspect = true;  // 8 MiB below 4 MiB's busbw, as in the default run
    c.push_back(a2_8t);
    c.push_back({"A6 H100, 128 nodes (RoCE, 8 NICs assumed), Ring LL128, 32 channels",
                 {"platform.preset=hgx_h100", "cluster.nodes=128", "network.nccl_algo=ring",
                  "network.nccl_proto=LL128", "network.channels=32"},
                 {{1 * kGiB, 110.84, true}, {2 * kGiB, 212.23, true}, {4 * kGiB, 338.16},
                  {8 * kGiB, 364.57}, {16 * kGiB, 367.29}},
                 0.12, 0.12});
    c.push_back({"B3 Azure NDmv4, A100, 8 x HDR, 2 nodes, default (in-place)",
                 {"platform.preset=dgx_a100", "cluster.nodes=2"},
                 {{1 * kGiB, 183.82}, {4 * kGiB, 188.18}},
                 0.01, 0.01});
    c.push_back({"B2 ABCI, A100, 4 x HDR, 2 nodes, CollNet (SHARP)",
                 {"platform.preset=dgx_a100", "cluster.nodes=2", "platform.nic.count=4",
                  "platform.fabric.sharp=true"},
                 from_1mib({11.11, 18.28, 28.55, 40.64, 57.21, 72.31, 84.37, 97.26, 96.65, 100.87, 104.10,
                            105.46}),
                 0.71, 1.31});
    c.push_back({"A3 CoreWeave HGX H100, 8 x NDR, 8 nodes, CollnetChain (SHARP)",
                 {"platform.preset=hgx_h100", "cluster.nodes=8", "platform.fabric.sharp=true",
                  "network.nccl_algo=collnetchain"},
                 {{512 * kMiB, 356.01}, {1 * kGiB, 365.90}, {2 * kGiB, 380.73}, {4 * kGiB, 383.23},
                  {8 * kGiB, 386.56}},
                 0.09, 0.13});
    c.push_back({"B4 CoreWeave HGX A100, 16 nodes (8 x HDR assumed), CollNet (SHARP)",
                 {"platform.preset=dgx_a100", "cluster.nodes=16", "platform.fabric.sharp=true"},
                 {{512 * kMiB, 147.85}, {1 * kGiB, 152.53}, {2 * kGiB, 157.15}, {4 * kGiB, 158.34},
                  {8 * kGiB, 159.75}},
                 0.52, 0.60});
    c.push_back({"F1 Azure ND H100 v5, one node, default (NVLS)",
                 {"platform.preset=hgx_h100", "cluster.nodes=1"},
                 from_1mib({43.70, 81.93, 128.73, 172.13, 234.45, 295.53, 361.78, 400.61, 423.38, 438.46,
                            466.35, 472.36, 475.54, 478.87}),
                 0.03, 0.51});
    c.push_back({"F1 Azure ND A100 v4, one node, default",
                 {"platform.preset=dgx_a100", "cluster.nodes=1"},
                 from_1mib({36.22, 53.54, 71.43, 89.99, 109.22, 132.77, 166.63, 174.18, 213.87, 221.58,
                            228.10, 230.22, 230.48, 231.58}),
                 0.26, 0.56});
    c.push_back({"F2 H100, one node, NCCL_ALGO=Ring",
                 {"platform.preset=hgx_h100", "cluster.nodes=1", "network.nccl_algo=ring"},
                 from_1mib({39.44, 87.26, 138.26, 182.39, 231.88, 274.45, 318.55, 334.33, 347.64, 355.65,
                            360.07, 363.84, 366.72, 368.09}),
                 0.03, 0.67});
    return c;
  }();
  return all;
}

Scenario scenario(const std::vector<std::string>& sets) { return load_scenario(std::nullopt, sets); }

double predicted_busbw(const CommModel& comm, double bytes) {
  const Duration t = comm.isolated_time(CollectiveOp::kAllReduce, bytes);
  return bytes / (static_cast<double>(t.ns()) * 1e-9) *
         bus_bandwidth_factor(CollectiveOp::kAllReduce, comm.workers()) / 1e9;
}


TEST(NcclValidation, PublishedAllReduceCurves) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    const CommModel comm = scenario_comm_model(scenario(c.sets));
    std::vector<double> errors;
    std::printf("\n%s\n  %10s %9s %9s %8s  %s\n", c.name.c_str(), "size", "measured", "ssgd", "error",
                "NCCL's choice");
    for (const Point& p : c.points) {
      const double bw = predicted_busbw(comm, p.bytes);
      const double e = (bw - p.busbw) / p.busbw;
      if (!p.suspect) errors.push_back(std::abs(e));
      std::string how = to_string(comm.algorithm_for(CollectiveOp::kAllReduce, p.bytes));
      if (comm.nccl_runs(CollectiveOp::kAllReduce)) {
        const nccl::Choice& ch = comm.nccl_choice(CollectiveOp::kAllReduce, p.bytes);
        how += std::string(" ") + nccl::to_string(ch.proto) + " " + std::to_string(ch.channels);
      }
      std::printf("  %8.0f MiB %9.2f %9.2f %+7.1f%%  %s%s\n", p.bytes / kMiB, p.busbw, bw, 100 * e, how.c_str(),
                  p.suspect ? "  (not counted)" : "");
    }
    const double med = median(errors);
    const double worst = *std::max_element(errors.begin(), errors.end());
    std::printf("  median |error| %.1f%%, worst %.1f%% over %zu sizes\n", 100 * med, 100 * worst, errors.size());
    EXPECT_LE(med, c.median_at_most);
    EXPECT_LE(worst, c.worst_at_most);
  }
}

// The targets (median 10%, worst 25%), where the model meets them.
TEST(NcclValidation, TargetsMetOnTheseSystems) {
  for (const std::string& name : {std::string("A1 HGX H100, 8 x NDR, 2 nodes, default"),
                                  std::string("B3 Azure NDmv4, A100, 8 x HDR, 2 nodes, default (in-place)")}) {
    const auto it = std::find_if(cases().begin(), cases().end(), [&](const Case& c) { return c.name == name; });
    ASSERT_NE(it, cases().end());
    EXPECT_LE(it->median_at_most, 0.10) << name;
    EXPECT_LE(it->worst_at_most, 0.25) << name;
  }
}

// E2: DGX B200 nodes, each algorithm forced, peak busbw at 32 GiB, 1 to 64
// nodes (the 8-node CollnetDirect run was not parsed by its report).
TEST(NcclValidation, B200PeaksByAlgorithmAndNodeCount) {
  struct Peak {
    std::int64_t nodes;
    const char* algo;
    double busbw;
  };
  const Peak peaks[] = {
      {1, "ring", 698.39},         {2, "ring", 388.41},          {4, "ring", 389.30},
      {8, "ring", 389.20},         {16, "ring", 388.30},         {32, "ring", 389.98},
      {64, "ring", 389.81},        {1, "tree", 555.81},          {2, "tree", 338.52},
      {4, "tree", 192.25},         {8, "tree", 194.53},          {16, "tree", 195.82},
      {32, "tree", 195.43},        {64, "tree", 195.90},         {1, "nvls", 844.35},
      {2, "nvlstree", 719.70},     {4, "nvlstree", 388.40},      {8, "nvlstree", 389.89},
      {16, "nvlstree", 388.87},    {32, "nvlstree", 389.49},     {64, "nvlstree", 389.72},
      {2, "collnetdirect", 597.97}, {4, "collnetdirect", 605.90}, {16, "collnetdirect", 588.83},
      {32, "collnetdirect", 565.06}, {64, "collnetdirect", 545.77}, {2, "collnetchain", 526.44},
      {4, "collnetchain", 540.07}, {8, "collnetchain", 546.26},   {16, "collnetchain", 544.99},
      {32, "collnetchain", 540.74}, {64, "collnetchain", 534.53},
  };
  std::vector<double> errors;
  std::printf("\nE2 DGX B200, 8 x NDR, peak busbw at 32 GiB\n  %6s %-14s %9s %9s %8s\n", "nodes", "algorithm",
              "measured", "ssgd", "error");
  for (const Peak& p : peaks) {
    std::vector<std::string> sets = {"platform.preset=dgx_b200", "cluster.nodes=" + std::to_string(p.nodes),
                                     std::string("network.nccl_algo=") + p.algo};
    const bool collnet = std::string(p.algo).starts_with("collnet");
    if (collnet) sets.push_back("platform.fabric.sharp=true");
    const CommModel comm = scenario_comm_model(scenario(sets));
    const double bw = predicted_busbw(comm, 32 * kGiB);
    const double e = (bw - p.busbw) / p.busbw;
    std::printf("  %6lld %-14s %9.2f %9.2f %+7.1f%%\n", static_cast<long long>(p.nodes), p.algo, p.busbw, bw,
                100 * e);
    if (!collnet) {
      errors.push_back(std::abs(e));
      EXPECT_LE(std::abs(e), 0.07) << p.nodes << " nodes, " << p.algo;
    } else if (std::string(p.algo) == "collnetdirect") {
      EXPECT_LE(std::abs(e), 0.09) << p.nodes << " nodes, " << p.algo;
    } else {
      // CollNet chains: the model is 18-27% above the published runs.
      EXPECT_LE(e, 0.30) << p.nodes << " nodes, " << p.algo;
      EXPECT_GE(e, 0.15) << p.nodes << " nodes, " << p.algo;
    }
  }
  std::printf("  ring, tree and NVLS: median |error| %.1f%%, worst %.1f%%\n", 100 * median(errors),
              100 * *std::max_element(errors.begin(), errors.end()));
  EXPECT_LE(median(errors), 0.05);
}

// ssgd calibrate --nic fitted on the 2-node curve of a cluster, predicting
// its 4- and 8-node runs (A2) and the 4-node run of A1.
TEST(NcclValidation, NicFittedOnTwoNodesPredictsMore) {
  const auto measurements = [](const Case& c, std::int64_t ranks) {
    std::vector<trace::Measurement> out;
    for (const Point& p : c.points) {
      if (p.suspect) continue;
      trace::Measurement m;
      m.ranks = ranks;
      m.bytes = p.bytes;
      const double us = p.bytes * bus_bandwidth_factor(CollectiveOp::kAllReduce, ranks) / (p.busbw * 1e3);
      m.time = Duration(static_cast<std::int64_t>(std::llround(us * 1000)));
      m.source = c.name;
      out.push_back(m);
    }
    return out;
  };
  // Fits `fitted` and predicts `predicted`, and prints what it found.
  const auto fit = [](const char* name, const std::vector<trace::Measurement>& fitted,
                      const std::vector<trace::Measurement>& predicted) {
    const NicFitResult r = fit_nic(scenario({"platform.preset=hgx_h100"}), fitted, predicted);
    std::printf("\n%s fitted on 2 nodes: NIC x %.3f, latency x %.2f\n", name, r.bandwidth_factor,
                r.latency_factor);
    for (const auto& c : r.curves) {
      std::printf("  %s %lld nodes: median %.1f%%, worst %.1f%%\n", c.fitted ? "fitted   " : "predicted",
                  static_cast<long long>(c.nodes), 100 * c.median_error, 100 * c.max_error);
    }
    return r;
  };
  const auto& all = cases();
  {
    auto predicted = measurements(all[4], 32);
    const auto eight = measurements(all[5], 64);
    predicted.insert(predicted.end(), eight.begin(), eight.end());
    const NicFitResult r = fit("A2", measurements(all[2], 16), predicted);
    ASSERT_EQ(r.curves.size(), 3u);
    EXPECT_LE(r.curves[0].median_error, 0.05);
    EXPECT_LE(r.curves[1].median_error, 0.18);  // 4 nodes
    EXPECT_LE(r.curves[2].median_error, 0.16);  // 8 nodes
  }
  {
    const NicFitResult r = fit("A1", measurements(all[0], 16), measurements(all[1], 32));
    ASSERT_EQ(r.curves.size(), 2u);
    EXPECT_LE(r.curves[1].median_error, 0.10);
  }
}

}  // namespace
}  // namespace ssgd::sim
