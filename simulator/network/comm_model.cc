#include "simulator/network/comm_model.h"

#include <algorithm>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "common/run_indexed.h"
#include "common/units.h"
#include "simulator/engine/engine.h"
#include "simulator/network/flow_network.h"

namespace ssgd::sim {

const char* to_string(NetworkModelKind kind) {
  switch (kind) {
    case NetworkModelKind::kAnalytical: return "analytical";
    case NetworkModelKind::kFlow: return "flow";
  }
  return "?";
}

CommModel::CommModel(std::shared_ptr<const Platform> platform, CommSettings settings,
                     std::int64_t first_node, std::int64_t nodes)
    : platform_(std::move(platform)), settings_(std::move(settings)) {
  const std::int64_t g = platform_->gpus_per_node();
  if (first_node < 0 || nodes < 1 || first_node + nodes > platform_->nodes()) {
    throw std::invalid_argument(fmt::format(
        "a job on nodes {}..{} does not fit a platform of {} nodes", first_node,
        first_node + nodes - 1, platform_->nodes()));
  }
  if (settings_.servers < 1) {
    throw std::invalid_argument(
        fmt::format("parameter servers must be at least 1, got {}", settings_.servers));
  }
  if (settings_.cpu_servers < 0) {
    throw std::invalid_argument(
        fmt::format("CPU servers must be at least 0, got {}", settings_.cpu_servers));
  }
  const bool byteps = settings_.algorithm == CollectiveAlgorithm::kBytePS;
  shape_.ranks = nodes * g;
  shape_.ranks_per_node = g;
  // BytePS: a server on each GPU machine, then one on each CPU machine.
  shape_.servers = byteps ? nodes + settings_.cpu_servers : settings_.servers;
  shape_.servers_colocated = byteps || settings_.servers_colocated;
  shape_.cpu_servers = byteps ? settings_.cpu_servers : 0;
  endpoints_.reserve(static_cast<std::size_t>(shape_.ranks + shape_.servers));
  for (std::int64_t r = 0; r < shape_.ranks; ++r) {
    endpoints_.push_back(platform_->gpu(first_node + r / g, r % g));
  }
  const bool has_servers =
      byteps || settings_.algorithm == CollectiveAlgorithm::kParameterServer;
  const std::int64_t colocated =
      shape_.servers_colocated ? shape_.servers - shape_.cpu_servers : 0;
  for (std::int64_t s = 0; has_servers && s < shape_.servers; ++s) {
    const std::int64_t node = s < colocated ? first_node + s % nodes
                                            : settings_.first_server_node + s - colocated;
    if (node >= platform_->nodes()) {
      throw std::invalid_argument(fmt::format(
          "parameter server {} would run on node {}, beyond the platform's {} nodes", s, node,
          platform_->nodes()));
    }
    endpoints_.push_back(platform_->host(node));
  }
}

const CalibrationBand* CommModel::band_for(CollectiveOp op, double bytes) const {
  if (!settings_.calibration) return nullptr;
  const CalibratedCollective* c = settings_.calibration->find(op, shape_.ranks);
  if (c == nullptr) return nullptr;
  return &c->band_for(bytes);
}

CollectiveAlgorithm CommModel::algorithm_for(CollectiveOp op, double bytes) const {
  if (settings_.algorithm != CollectiveAlgorithm::kAuto) return settings_.algorithm;
  if (settings_.calibration) {
    if (const CalibratedCollective* c = settings_.calibration->find(op, shape_.ranks)) return c->algorithm;
  }
  const auto key = std::make_pair(static_cast<int>(op), bytes);
  if (auto it = algorithm_cache_.find(key); it != algorithm_cache_.end()) return it->second;
  // The way choose_algorithm() does it, with the closed forms kept.
  const CollectiveCosts costs = costs_for(op, bytes);
  CollectiveAlgorithm best = CollectiveAlgorithm::kAuto;
  Duration best_time;
  for (const CollectiveAlgorithm a : auto_candidates(op)) {
    const Duration t = closed_form(op, a).time(bytes, costs);
    if (best == CollectiveAlgorithm::kAuto || t < best_time) {
      best = a;
      best_time = t;
    }
  }
  algorithm_cache_.emplace(key, best);
  return best;
}

const ClosedForm& CommModel::closed_form(CollectiveOp op, CollectiveAlgorithm algorithm) const {
  const auto key = std::make_pair(static_cast<int>(op), static_cast<int>(algorithm));
  auto it = closed_forms_.find(key);
  if (it == closed_forms_.end()) it = closed_forms_.emplace(key, ClosedForm(op, algorithm, shape_)).first;
  return it->second;
}

CollectiveCosts CommModel::costs_for(CollectiveOp op, double bytes) const {
  CollectiveCosts costs = platform_->collective_costs();
  if (const CalibrationBand* band = band_for(op, bytes)) {
    const LevelCost level{band->latency, band->bandwidth_bytes_per_s};
    if (settings_.calibration->level == "intra_node") {
      costs.intra = level;
    } else {
      costs.inter = level;
      costs.inter_streams = {};  // measured with the transport's own limits
    }
  }
  return costs;
}

Duration CommModel::analytical_time(CollectiveOp op, double bytes) const {
  const auto key = std::make_pair(static_cast<int>(op), bytes);
  if (auto it = analytical_cache_.find(key); it != analytical_cache_.end()) return it->second;
  const Duration d = closed_form(op, algorithm_for(op, bytes)).time(bytes, costs_for(op, bytes));
  analytical_cache_.emplace(key, d);
  return d;
}

CollectiveCall CommModel::call(CollectiveOp op, double bytes) const {
  CollectiveCall c;
  c.op = op;
  c.algorithm = algorithm_for(op, bytes);
  c.shape = shape_;
  c.bytes = bytes;
  c.endpoints = &endpoints_;
  c.band = band_for(op, bytes);
  return c;
}

Duration CommModel::isolated_time(CollectiveOp op, double bytes) const {
  if (settings_.model == NetworkModelKind::kAnalytical || shape_.ranks == 1) {
    return shape_.ranks == 1 ? Duration::zero() : analytical_time(op, bytes);
  }
  const auto key = std::make_pair(static_cast<int>(op), bytes);
  if (auto it = isolated_cache_.find(key); it != isolated_cache_.end()) return it->second;
  prepare_isolated(op, {bytes}, 1);
  return isolated_cache_.at(key);
}

std::shared_ptr<CollectiveRecording> CommModel::recording_for(const CollectiveCall& c,
                                                              const CollectivePlan& plan) const {
  if (!planner().keeps(&plan) || !runs_uncapped(c, plan, platform_->inter_node_streams())) {
    return nullptr;
  }
  return std::make_shared<CollectiveRecording>();
}

void CommModel::prepare_isolated(CollectiveOp op, const std::vector<double>& sizes,
                                 std::size_t jobs) const {
  if (settings_.model == NetworkModelKind::kAnalytical || shape_.ranks == 1) return;
  // The sizes not known yet, each once, planned here: the runs only read the
  // planner.
  std::vector<double> todo;
  std::vector<CollectiveCall> calls;
  std::vector<std::shared_ptr<const CollectivePlan>> plans;
  for (const double bytes : sizes) {
    if (isolated_cache_.contains({static_cast<int>(op), bytes}) ||
        std::find(todo.begin(), todo.end(), bytes) != todo.end()) {
      continue;
    }
    todo.push_back(bytes);
    calls.push_back(call(op, bytes));
    plans.push_back(planner().plan(calls.back()));
  }
  std::vector<std::shared_ptr<CollectiveRecording>> recordings;
  for (std::size_t i = 0; i < todo.size(); ++i) recordings.push_back(recording_for(calls[i], *plans[i]));
  std::vector<Duration> times(todo.size());
  run_indexed(todo.size(), jobs, [&](std::size_t i) {
    times[i] = run_alone(calls[i], plans[i], recordings[i].get());
  });
  for (std::size_t i = 0; i < todo.size(); ++i) {
    planner().keep_recording(plans[i].get(), std::move(recordings[i]));
    isolated_cache_.emplace(std::make_pair(static_cast<int>(op), todo[i]), times[i]);
  }
}

std::size_t CommModel::isolated_threads() {
  return std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, kMaxIsolatedThreads);
}

Duration CommModel::run_alone(const CollectiveCall& c, std::shared_ptr<const CollectivePlan> plan,
                              CollectiveRecording* recording) const {
  Engine engine;
  FlowNetwork network(engine, platform_->link_capacities());
  CollectiveRunner runner(engine, network, *platform_, &planner());
  if (recording != nullptr) network.record(&recording->usage);
  runner.run(c, std::move(plan), [] {});
  engine.run();
  const Duration d = engine.now() - Time::zero();
  if (recording != nullptr) {
    network.record(nullptr);
    recording->duration = d;
    recording->events = engine.events_processed();
    recording->flows = network.flows_started();
    recording->recomputations = network.recomputations();
    recording->pruned = network.links_pruned();
    // A link's busy spells summed (whole nanoseconds: in any order).
    auto& busy = recording->usage.busy;
    std::sort(busy.begin(), busy.end());
    std::size_t kept = 0;
    for (const auto& [link, ns] : busy) {
      if (kept > 0 && busy[kept - 1].first == link) {
        busy[kept - 1].second += ns;
      } else {
        busy[kept++] = {link, ns};
      }
    }
    busy.resize(kept);
    busy.shrink_to_fit();
    recording->usage.bytes.shrink_to_fit();
  }
  return d;
}

CollectivePlanner& CommModel::planner() const {
  if (!planner_) planner_ = std::make_shared<CollectivePlanner>(*platform_);
  return *planner_;
}

std::string CommModel::describe() const {
  if (shape_.ranks == 1) return "single worker: no gradient communication";
  std::string s = fmt::format("{} model, {} over {} workers on {}", to_string(settings_.model),
                              to_string(settings_.algorithm), shape_.ranks, platform_->describe());
  if (settings_.algorithm == CollectiveAlgorithm::kParameterServer) {
    s += fmt::format(", {} server{} {}", shape_.servers, shape_.servers == 1 ? "" : "s",
                     shape_.servers_colocated ? "colocated" : "on nodes of their own");
  }
  if (settings_.algorithm == CollectiveAlgorithm::kBytePS) {
    s += fmt::format(", a server on each GPU machine and {} CPU machine{} ({:.1f}% summed there)",
                     shape_.cpu_servers, shape_.cpu_servers == 1 ? "" : "s",
                     100 * byteps_cpu_share(shape_.nodes(), shape_.cpu_servers));
  }
  if (settings_.calibration) s += ", calibrated " + settings_.calibration->level;
  return s;
}

}  // namespace ssgd::sim
