#pragma once
// One training job's collectives on a platform: which library runs them and
// how (the collective library, network.library), and how long each takes
// under one of two network models (network.model):
//   analytical  each collective takes its time alone on the platform's
//               links: NCCL's model of its own choice (simulator/nccl), or a
//               textbook algorithm's steps each paced by its busiest link
//               (platform_cost.h), or a calibrated size band's costs;
//   flow        each collective runs as flows on the platform's links, shared
//               by max-min fairness with everything else in flight
//               (simulator/network/flow_network.h).
// The library:
//   nccl        NCCL's communicator (channels over every NIC, NCCL's algorithm
//               and protocol choice: simulator/nccl/nccl_communicator.h) for
//               the operations NCCL has; all_to_all, and any operation a
//               network calibration covers, as the textbook algorithms;
//   generic     the textbook algorithms (simulator/collective), one of each
//               collective at a time, as MPI, gloo, Horovod or BytePS run them.
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
#include "simulator/nccl/nccl_communicator.h"
#include "simulator/network/network_model.h"
#include "simulator/network/platform_cost.h"
#include "simulator/platform/platform.h"

namespace ssgd::sim {

struct CommSettings {
  // network.model (network_model.h); null: analytical.
  std::shared_ptr<const NetworkModel> model;
  CollectiveLibrary library = CollectiveLibrary::kNccl;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::kAuto;
  nccl::Settings nccl;  // NCCL_ALGO, NCCL_PROTO and channels (library nccl)
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
  [[nodiscard]] const NetworkModel& model() const { return *settings_.model; }
  [[nodiscard]] const Platform& platform() const { return *platform_; }
  [[nodiscard]] const std::shared_ptr<const Platform>& shared_platform() const { return platform_; }
  [[nodiscard]] const std::vector<VertexId>& endpoints() const { return endpoints_; }

  // The algorithm a collective of `bytes` runs with: NCCL's choice (under
  // the scenario's algorithm and lists) where NCCL runs it; else the
  // scenario's, or for auto the calibrated one when a calibration covers
  // `op`, else the faster of ring and double binary tree on this platform.
  [[nodiscard]] CollectiveAlgorithm algorithm_for(CollectiveOp op, double bytes) const;
  // Whether NCCL's communicator runs `op`.
  [[nodiscard]] bool nccl_runs(CollectiveOp op) const;
  // NCCL's choice for `op` on `bytes` (nccl_runs(op) must hold).
  [[nodiscard]] const nccl::Choice& nccl_choice(CollectiveOp op, double bytes) const;
  // How `op` on `bytes` runs, as the tables print it: its algorithm, and
  // NCCL's protocol and channels (empty and 0 where NCCL does not run it).
  struct RunDescription {
    std::string algorithm;
    std::string protocol;
    int channels = 0;
  };
  [[nodiscard]] RunDescription run_description(CollectiveOp op, double bytes) const;
  [[nodiscard]] const nccl::Communicator* communicator() const { return nccl_.get(); }
  // What `times` collectives of `bytes` put on every link (bytes, into
  // `into`, one entry per link): the analytical model's link traffic.
  void add_link_bytes(CollectiveOp op, double bytes, std::vector<double>& into,
                      double times = 1) const;
  // The calibrated band for `op` at `bytes`, or null.
  [[nodiscard]] const CalibrationBand* band_for(CollectiveOp op, double bytes) const;
  // The estimate of a collective alone on the platform: NCCL's model of its
  // choice, or the textbook algorithm's steps on the platform.
  [[nodiscard]] Duration analytical_time(CollectiveOp op, double bytes) const;
  // The time with nothing else on the network, as the network model has it
  // (NetworkModel::times_alone; cached by size).
  [[nodiscard]] Duration isolated_time(CollectiveOp op, double bytes) const;
  // Works out isolated_time() of every size not yet known, on up to `jobs`
  // threads where the model runs them (each on its own engine, so the
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
  // Each (op, algorithm)'s steps on the platform, worked out once: large
  // trees cost O(P log P) to route, and every size after that is a few
  // phases.
  [[nodiscard]] const PlatformCost& platform_cost(CollectiveOp op, CollectiveAlgorithm algorithm) const;
  // A textbook algorithm's time alone on the platform, with the calibrated
  // band of `op` at `bytes` (if any) at its level.
  [[nodiscard]] Duration textbook_time(CollectiveOp op, CollectiveAlgorithm algorithm, double bytes) const;
  bool band_inside_ = false;  // the calibration is of the intra_node level
  mutable std::map<std::pair<int, int>, PlatformCost> platform_costs_;
  // NCCL's communicator over the job's ranks (library nccl, more than one
  // rank); shared by copies of this model, as the planner.
  std::shared_ptr<const nccl::Communicator> nccl_;
  mutable std::map<std::pair<int, double>, nccl::Choice> nccl_choices_;
  // Answers kept by size: a profile has a few hundred sizes, each asked for
  // once per iteration.
  mutable std::map<std::pair<int, double>, Duration> isolated_cache_;
  mutable std::map<std::pair<int, double>, Duration> analytical_cache_;
  mutable std::map<std::pair<int, double>, CollectiveAlgorithm> algorithm_cache_;
  mutable std::shared_ptr<CollectivePlanner> planner_;
};

}  // namespace ssgd::sim
