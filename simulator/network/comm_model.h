#pragma once
// One training job's gradient communication on a platform, under one of two
// network models (network.model):
//   analytical  each collective takes its algorithm's alpha-beta closed form
//               (simulator/collective/collective.h) with the costs of the
//               platform's routes, or of a calibrated size band;
//   flow        each collective runs step by step as flows on the platform's
//               links, shared by max-min fairness with everything else in
//               flight (simulator/network/flow_network.h).
// Ranks sit on `nodes` consecutive nodes from `first_node`, rank r on GPU
// r % gpus_per_node (in ring order) of node first_node + r / gpus_per_node.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "simulator/calibration/network_calibration.h"
#include "simulator/collective/collective.h"
#include "simulator/network/collective_plan.h"
#include "simulator/network/collective_runner.h"
#include "simulator/network/network_model_kind.h"
#include "simulator/platform/platform.h"

namespace ssgd::sim {

struct CommSettings {
  NetworkModelKind model = NetworkModelKind::kAnalytical;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::kAuto;
  std::int64_t servers = 1;         // parameter server: K
  bool servers_colocated = true;    // else on nodes of their own, from first_server_node
  std::int64_t cpu_servers = 0;     // byteps: CPU machines with a server, from first_server_node
  std::int64_t first_server_node = 0;
  std::shared_ptr<const NetworkCalibration> calibration;  // optional
};

class CommModel {
 public:
  // Throws std::invalid_argument when the job does not fit the platform or
  // the settings cannot run on it.
  CommModel(std::shared_ptr<const Platform> platform, CommSettings settings,
            std::int64_t first_node, std::int64_t nodes);

  [[nodiscard]] std::int64_t workers() const { return shape_.ranks; }
  [[nodiscard]] const CollectiveShape& shape() const { return shape_; }
  [[nodiscard]] const CommSettings& settings() const { return settings_; }
  [[nodiscard]] const Platform& platform() const { return *platform_; }
  [[nodiscard]] const std::vector<VertexId>& endpoints() const { return endpoints_; }

  // The algorithm a collective of `bytes` runs with: the scenario's, or for
  // auto the calibrated one when a calibration covers `op`, else NCCL's choice.
  [[nodiscard]] CollectiveAlgorithm algorithm_for(CollectiveOp op, double bytes) const;
  // The calibrated band for `op` at `bytes`, or null.
  [[nodiscard]] const CalibrationBand* band_for(CollectiveOp op, double bytes) const;
  [[nodiscard]] CollectiveCosts costs_for(CollectiveOp op, double bytes) const;
  [[nodiscard]] Duration analytical_time(CollectiveOp op, double bytes) const;
  // The time with nothing else on the network: the closed form, or one run
  // of the flow model (cached by size).
  [[nodiscard]] Duration isolated_time(CollectiveOp op, double bytes) const;
  // Works out isolated_time() of every size not yet known, the flow model's
  // runs on up to `jobs` threads (each run alone on its own engine, so the
  // answers are the same however many).
  void prepare_isolated(CollectiveOp op, const std::vector<double>& sizes,
                        std::size_t jobs) const;
  // The threads a job's isolated runs take: the machine's, at most four (each
  // holds a flow network of the whole platform; replay_estimate.cc counts
  // them).
  static constexpr std::size_t kMaxIsolatedThreads = 4;
  [[nodiscard]] static std::size_t isolated_threads();
  [[nodiscard]] CollectiveCall call(CollectiveOp op, double bytes) const;
  // The plans of this job's collectives on its platform, kept for its
  // isolated runs and for a runner of the whole job's to share (copies of
  // this model share it too).
  [[nodiscard]] CollectivePlanner& planner() const;

  [[nodiscard]] std::string describe() const;

 private:
  std::shared_ptr<const Platform> platform_;
  CommSettings settings_;
  CollectiveShape shape_;
  std::vector<VertexId> endpoints_;
  // The closed form of each (op, algorithm), worked out once: large trees
  // cost O(P log P) to work out, and every size after that is a few phases.
  [[nodiscard]] const ClosedForm& closed_form(CollectiveOp op, CollectiveAlgorithm algorithm) const;
  // One flow-model run of `call` alone on the platform, planned by `plan`;
  // recorded into `recording` when given (CollectiveRecording).
  [[nodiscard]] Duration run_alone(const CollectiveCall& call,
                                   std::shared_ptr<const CollectivePlan> plan,
                                   CollectiveRecording* recording = nullptr) const;
  // A recording to make of `call`'s isolated run: where the planner keeps
  // its plan and it runs uncapped.
  [[nodiscard]] std::shared_ptr<CollectiveRecording> recording_for(
      const CollectiveCall& call, const CollectivePlan& plan) const;
  mutable std::map<std::pair<int, int>, ClosedForm> closed_forms_;
  // Answers kept by size: a profile has a few hundred sizes, each asked for
  // once per iteration.
  mutable std::map<std::pair<int, double>, Duration> isolated_cache_;
  mutable std::map<std::pair<int, double>, Duration> analytical_cache_;
  mutable std::map<std::pair<int, double>, CollectiveAlgorithm> algorithm_cache_;
  mutable std::shared_ptr<CollectivePlanner> planner_;
};

}  // namespace ssgd::sim
