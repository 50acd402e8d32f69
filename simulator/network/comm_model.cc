#include "simulator/network/comm_model.h"

#include <algorithm>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "common/error.h"
#include "common/units.h"


namespace ssgd::sim {

CommModel::CommModel(std::shared_ptr<const Platform> platform, CommSettings settings,
                     std::int64_t first_node, std::int64_t nodes)
    : platform_(std::move(platform)), settings_(std::move(settings)) {
  if (settings_.model == nullptr) settings_.model = find_network_model("analytical");
  band_inside_ = settings_.calibration != nullptr && settings_.calibration->level == "intra_node";
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
  if (settings_.library == CollectiveLibrary::kNccl) {
    if (!library_runs(CollectiveLibrary::kNccl, settings_.algorithm)) {
      throw ParameterError("network.algorithm", fmt::format(
          "{} is not an algorithm NCCL has (ring, double_binary_tree, nvls, nvls_tree, "
          "collnet_direct, collnet_chain, pat); set network.library: generic to run it",
          to_string(settings_.algorithm)));
    }
    if (shape_.ranks > 1) {
      std::vector<VertexId> ranks(endpoints_.begin(), endpoints_.begin() + shape_.ranks);
      nccl::Settings ns = settings_.nccl;
      if (settings_.algorithm != CollectiveAlgorithm::kAuto) {
        // The scenario's algorithm, for every operation that has it, as
        // NCCL_ALGO=<it> does.
        ns.algorithms = nccl::to_string(*nccl::algo_of(settings_.algorithm)) +
                        (ns.algorithms.empty() ? std::string() : ";" + ns.algorithms);
      }
      try {
        nccl_ = std::make_shared<const nccl::Communicator>(*platform_, std::move(ranks), g, ns);
      } catch (const std::invalid_argument& e) {
        throw ParameterError(settings_.nccl.protocols.empty() || std::string(e.what()).find("protocol") == std::string::npos
                                 ? "network.nccl_algo"
                                 : "network.nccl_proto",
                             e.what());
      }
    }
  } else {
    if (!library_runs(CollectiveLibrary::kGeneric, settings_.algorithm)) {
      throw ParameterError("network.algorithm",
                           fmt::format("{} is NCCL's algorithm; it needs network.library: nccl",
                                       to_string(settings_.algorithm)));
    }
    const char* nccl_key = !settings_.nccl.algorithms.empty() ? "network.nccl_algo"
                           : !settings_.nccl.protocols.empty() ? "network.nccl_proto"
                           : settings_.nccl.channels         ? "network.channels"
                                                             : nullptr;
    if (nccl_key != nullptr) {
      throw ParameterError(nccl_key, fmt::format("{} sets NCCL's communicator; the collectives here "
                                                 "run with network.library: generic",
                                                 nccl_key));
    }
  }
}

bool CommModel::nccl_runs(CollectiveOp op) const {
  if (nccl_ == nullptr || !nccl::func_of(op)) return false;
  // A calibrated operation runs the file's algorithm with its costs.
  return settings_.calibration == nullptr || settings_.calibration->find(op, shape_.ranks) == nullptr;
}

const nccl::Choice& CommModel::nccl_choice(CollectiveOp op, double bytes) const {
  const auto key = std::make_pair(static_cast<int>(op), bytes);
  if (auto it = nccl_choices_.find(key); it != nccl_choices_.end()) return it->second;
  const nccl::Func f = *nccl::func_of(op);
  nccl::Choice c;
  try {
    c = nccl_->choose(f, bytes);
  } catch (const std::invalid_argument& e) {
    throw ParameterError(settings_.algorithm != CollectiveAlgorithm::kAuto ? "network.algorithm"
                                                                           : "network.nccl_algo",
                         e.what());
  }
  return nccl_choices_.emplace(key, c).first->second;
}

CommModel::RunDescription CommModel::run_description(CollectiveOp op, double bytes) const {
  RunDescription d;
  d.algorithm = to_string(algorithm_for(op, bytes));
  if (nccl_runs(op)) {
    const nccl::Choice& c = nccl_choice(op, bytes);
    d.protocol = nccl::to_string(c.proto);
    d.channels = c.channels;
  }
  return d;
}

const CalibrationBand* CommModel::band_for(CollectiveOp op, double bytes) const {
  if (!settings_.calibration) return nullptr;
  const CalibratedCollective* c = settings_.calibration->find(op, shape_.ranks);
  if (c == nullptr) return nullptr;
  return &c->band_for(bytes);
}

CollectiveAlgorithm CommModel::algorithm_for(CollectiveOp op, double bytes) const {
  if (nccl_runs(op)) return nccl::to_collective(nccl_choice(op, bytes).algo);
  if (settings_.algorithm != CollectiveAlgorithm::kAuto &&
      library_runs(CollectiveLibrary::kGeneric, settings_.algorithm)) {
    try {
      check_algorithm(op, settings_.algorithm);
    } catch (const std::invalid_argument& e) {
      // A job's collective the scenario's algorithm has no steps for (a
      // sharded strategy's all-gathers under an all-reduce algorithm).
      std::string why = e.what();
      if (why.starts_with("collective: ")) why.erase(0, 12);
      throw ParameterError(
          "network.algorithm",
          fmt::format("{}; the job issues {}: set one of those, or auto", why, to_string(op)));
    }
    return settings_.algorithm;
  }
  if (settings_.calibration) {
    if (const CalibratedCollective* c = settings_.calibration->find(op, shape_.ranks)) return c->algorithm;
  }
  const auto key = std::make_pair(static_cast<int>(op), bytes);
  if (auto it = algorithm_cache_.find(key); it != algorithm_cache_.end()) return it->second;
  // The faster candidate on this platform, ties to the first.
  CollectiveAlgorithm best = CollectiveAlgorithm::kAuto;
  Duration best_time;
  for (const CollectiveAlgorithm a : auto_candidates(op)) {
    const Duration t = textbook_time(op, a, bytes);
    if (best == CollectiveAlgorithm::kAuto || t < best_time) {
      best = a;
      best_time = t;
    }
  }
  algorithm_cache_.emplace(key, best);
  return best;
}

const PlatformCost& CommModel::platform_cost(CollectiveOp op, CollectiveAlgorithm algorithm) const {
  const auto key = std::make_pair(static_cast<int>(op), static_cast<int>(algorithm));
  auto it = platform_costs_.find(key);
  if (it == platform_costs_.end()) {
    it = platform_costs_
             .try_emplace(key, op, algorithm, shape_, endpoints_, planner().routes(), *platform_)
             .first;
  }
  return it->second;
}

Duration CommModel::textbook_time(CollectiveOp op, CollectiveAlgorithm algorithm, double bytes) const {
  const CalibrationBand* band = band_for(op, bytes);
  return platform_cost(op, algorithm).time(bytes, band, band != nullptr && band_inside_,
                                           platform_->inter_node_streams());
}

Duration CommModel::analytical_time(CollectiveOp op, double bytes) const {
  const auto key = std::make_pair(static_cast<int>(op), bytes);
  if (auto it = analytical_cache_.find(key); it != analytical_cache_.end()) return it->second;
  Duration d;
  if (nccl_runs(op)) {
    d = nccl_choice(op, bytes).time;
  } else {
    d = textbook_time(op, algorithm_for(op, bytes), bytes);
  }
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
  c.band_inside = c.band != nullptr && band_inside_;
  if (nccl_runs(op)) {
    c.nccl = nccl_.get();
    c.choice = nccl_choice(op, bytes);
  }
  c.estimate = shape_.ranks == 1 ? Duration::zero() : analytical_time(op, bytes);
  return c;
}

void CommModel::add_link_bytes(CollectiveOp op, double bytes, std::vector<double>& into,
                               double times) const {
  if (shape_.ranks == 1 || bytes == 0) return;
  if (nccl_runs(op)) {
    nccl_->add_link_bytes(*nccl::func_of(op), nccl_choice(op, bytes), bytes, into, times);
  } else {
    platform_cost(op, algorithm_for(op, bytes)).add_link_bytes(bytes * times, into);
  }
}

Duration CommModel::isolated_time(CollectiveOp op, double bytes) const {
  if (shape_.ranks == 1) return Duration::zero();
  const auto key = std::make_pair(static_cast<int>(op), bytes);
  if (auto it = isolated_cache_.find(key); it != isolated_cache_.end()) return it->second;
  prepare_isolated(op, {bytes}, 1);
  return isolated_cache_.at(key);
}

void CommModel::prepare_isolated(CollectiveOp op, const std::vector<double>& sizes,
                                 std::size_t jobs) const {
  if (shape_.ranks == 1) return;
  // The sizes not known yet, each once.
  std::vector<double> todo;
  std::vector<CollectiveCall> calls;
  for (const double bytes : sizes) {
    if (isolated_cache_.contains({static_cast<int>(op), bytes}) ||
        std::find(todo.begin(), todo.end(), bytes) != todo.end()) {
      continue;
    }
    todo.push_back(bytes);
    calls.push_back(call(op, bytes));
  }
  std::vector<Duration> times(todo.size());
  settings_.model->times_alone(*platform_, planner(), calls, times, jobs);
  for (std::size_t i = 0; i < todo.size(); ++i) {
    isolated_cache_.emplace(std::make_pair(static_cast<int>(op), todo[i]), times[i]);
  }
}

std::size_t CommModel::isolated_threads() {
  return std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, kMaxIsolatedThreads);
}

CollectivePlanner& CommModel::planner() const {
  if (!planner_) planner_ = std::make_shared<CollectivePlanner>(*platform_);
  return *planner_;
}

std::string CommModel::describe() const {
  if (shape_.ranks == 1) return "single worker: no gradient communication";
  std::string s;
  if (nccl_ != nullptr) {
    const nccl::Graphs& g = nccl_->graphs();
    s = fmt::format("{} model, NCCL {} ({} channels{}{}) over {} workers on {}",
                    settings_.model->name(),
                    settings_.algorithm == CollectiveAlgorithm::kAuto ? std::string("auto")
                                                                      : to_string(settings_.algorithm),
                    g.coll_channels, g.nvls_channels > 0 ? fmt::format(", {} NVLS", g.nvls_channels) : "",
                    settings_.nccl.algorithms.empty() ? "" : ", NCCL_ALGO " + settings_.nccl.algorithms,
                    shape_.ranks, platform_->describe());
    if (!settings_.nccl.protocols.empty()) s += ", NCCL_PROTO " + settings_.nccl.protocols;
    if (nccl_->system().collnet) {
      // Silence would be a wrong answer: CollNet's figures are the least sure.
      s += "; CollNet (SHARP) at the links' rates, not the switches' reduction rate: published runs "
           "are 0.4-1.1x of it (docs/validation.md, section 11)";
    }
  } else {
    s = fmt::format("{} model, {} over {} workers on {}", settings_.model->name(),
                    to_string(settings_.algorithm), shape_.ranks, platform_->describe());
  }
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
