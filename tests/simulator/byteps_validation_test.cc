// Issue 18's validation of the byteps algorithm and the TCP stream model
// against BytePS's published speedups over Horovod (bytedance/byteps,
// docs/performance.md): 8 V100 a machine, batch 64 per GPU, fp32,
//   NVLink + 20 Gb/s TCP (cloud VMs): ResNet-50 +44%, VGG-16 +100%
//   two PCIe switches of 4 GPUs + 100 Gb/s RoCE v2: ResNet-50 +7%, VGG-16 +17%
// The document gives one speedup per model; the machine count is on its
// figures' axes only, so each case is predicted at 4 and at 8 machines, with
// as many CPU servers as machines (BytePS's rule: as much server bandwidth as
// worker bandwidth). Horovod is the `horovod` policy over the ring; BytePS
// the `byteps` algorithm under `wfbp` (its priority scheduling is off by
// default). The test prints the table of docs/validation.md, section 8, and
// holds every error to the bound stated there.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "common/logging.h"
#include "simulator/api/simulation.h"
#include "simulator/input/scenario_inputs.h"
#include "presentation/report/simulation_report.h"
#include "simulator/scenario/scenario.h"

namespace ssgd::sim {
namespace {

struct Case {
  const char* model;
  const char* setting;
  double measured;  // BytePS over Horovod, iteration time ratio
  std::vector<std::string> platform;
};

std::vector<std::string> with(std::vector<std::string> base, const std::vector<std::string>& more) {
  base.insert(base.end(), more.begin(), more.end());
  return base;
}

double iteration_ns(const SimulationInput& input, const std::vector<std::string>& sets) {
  const Scenario scenario = load_scenario(std::nullopt, sets);
  SimulationOptions options;
  const Simulation s = run_simulation(input, scenario, options);
  return report::simulation_report(s).at("iteration_time_ns").get<double>();
}

TEST(BytepsValidation, SpeedupsOverHorovodAgainstBytepsPublishedFigures) {
  set_log_levels("error");
  const std::vector<std::string> tcp20 = {"network.inter_node=25gbe",
                                          "network.inter_node_bandwidth=2.25GB/s",
                                          "network.intra_node=nvlink2"};
  const std::vector<std::string> nccl_sockets = {"platform.nic.tcp_preset=nccl_socket"};
  const std::vector<std::string> rdma_pcie = {
      "network.inter_node=100gbe", "platform.nic.transport=rdma", "network.intra_node=pcie3_x16",
      "platform.pcie.switches=2"};
  const std::vector<Case> cases = {
      {"resnet50", "NVLink, 20 Gb/s TCP", 1.44, tcp20},
      {"resnet50", "NVLink, 20 Gb/s TCP, NCCL sockets", 1.44, with(tcp20, nccl_sockets)},
      {"vgg16", "NVLink, 20 Gb/s TCP", 2.00, tcp20},
      {"vgg16", "NVLink, 20 Gb/s TCP, NCCL sockets", 2.00, with(tcp20, nccl_sockets)},
      {"resnet50", "PCIe x2 switches, 100 Gb/s RoCE", 1.07, rdma_pcie},
      {"vgg16", "PCIe x2 switches, 100 Gb/s RoCE", 1.17, rdma_pcie},
  };
  std::printf(
      "| model | setting | machines | Horovod (ms) | BytePS (ms) | predicted | measured | error "
      "|\n");
  std::printf("|---|---|---|---|---|---|---|---|\n");
  double worst = 0;
  for (const Case& c : cases) {
    const SimulationInput input = load_simulation_input(
        std::string(SSGD_SOURCE_DIR) + "/traces/datasets/" + c.model + "_v100.csv");
    for (const int machines : {4, 8}) {
      const std::vector<std::string> base =
          with(c.platform, {"cluster.nodes=" + std::to_string(machines), "cluster.gpus_per_node=8",
                            "workload.batch_per_gpu=64", "iterations=3"});
      const double horovod = iteration_ns(input, with(base, {"policy.overlap=horovod"}));
      const double byteps =
          iteration_ns(input, with(base, {"policy.overlap=wfbp", "network.algorithm=byteps",
                                          "network.cpu_servers=" + std::to_string(machines)}));
      const double predicted = horovod / byteps;
      const double error = 100 * (predicted - c.measured) / c.measured;
      worst = std::max(worst, std::abs(error));
      std::printf("| %s | %s | %d | %.1f | %.1f | %.2fx | %.2fx | %+.0f%% |\n", c.model, c.setting,
                  machines, horovod / 1e6, byteps / 1e6, predicted, c.measured, error);
      // BytePS never loses to Horovod here, as measured.
      EXPECT_GE(predicted, 0.99) << c.model << " " << c.setting << " " << machines;
    }
  }
  // docs/validation.md, section 8: every case within 32% (the worst is
  // ResNet-50 on 20 Gb/s TCP, where the model hides Horovod's communication
  // behind backward and measurement does not).
  EXPECT_LE(worst, 32.0);
}

}  // namespace
}  // namespace ssgd::sim
