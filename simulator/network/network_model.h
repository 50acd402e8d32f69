#pragma once
// How collectives use a platform's links: a network model. One file per
// model, each registered by name in network_models.cc with what it models
// and where it comes from, and picked by name (scenario key network.model):
//   analytical  every collective takes its time alone on the platform, its
//               estimate (CollectiveCall::estimate: NCCL's model of its own
//               choice, or a textbook algorithm's steps each paced by its
//               busiest link); collectives that overlap do not slow each
//               other (analytical_network.h);
//   flow        collectives run as flows over the platform's links, shared
//               by max-min fairness with everything in flight
//               (flow_network_model.h).
// The replay, the execution-graph replay and the shared fabric use a model
// only through this interface, so a new model (a packet-level backend, say)
// is one more implementation and one more line in the registry.

#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/time.h"
#include "simulator/engine/engine.h"
#include "simulator/network/collective_plan.h"
#include "simulator/network/flow_network.h"
#include "simulator/platform/platform.h"

namespace ssgd::sim {

// A model's network during one run on one engine: collectives started on it
// end from engine events, sharing the links with whatever else it runs.
class NetworkRun {
 public:
  virtual ~NetworkRun() = default;
  // Starts `call` now; `done` runs from an engine event when it has ended.
  virtual void run(const CollectiveCall& call, std::function<void()> done) = 0;
  // The same where nothing else will use the engine or the network until it
  // has ended (a list schedule's executor tasks): a model may then stand for
  // the same run by a cheaper one, with the same end and link traffic.
  virtual void run_alone(const CollectiveCall& call, std::function<void()> done) {
    run(call, std::move(done));
  }
  // The bytes every link carried so far, one entry per link.
  [[nodiscard]] virtual std::vector<double> link_bytes() = 0;
  // Busy spells of the links asked for at open(), for timelines.
  [[nodiscard]] virtual const std::vector<LinkActivity>& activity() const = 0;
  // One line for the debug log: what the run did.
  [[nodiscard]] virtual std::string summary() const = 0;
};

class NetworkModel {
 public:
  virtual ~NetworkModel() = default;
  [[nodiscard]] virtual std::string_view name() const = 0;
  // Whether overlapping collectives share links: then a run opens the
  // model's network on its engine (open()) and collectives run there; else
  // each takes its time alone, whatever else runs.
  [[nodiscard]] virtual bool shares_links() const = 0;
  // The time alone of each call (planned by `planner`, for `platform`), into
  // `times`; a model may work them out on up to `threads` threads, each on
  // its own, so the answers do not depend on how many.
  virtual void times_alone(const Platform& platform, CollectivePlanner& planner,
                           std::span<const CollectiveCall> calls, std::span<Duration> times,
                           std::size_t threads) const = 0;
  // The network of one run on `engine`; busy spells kept for the links with
  // keep_activity[link] set. Null when the model does not share links.
  [[nodiscard]] virtual std::unique_ptr<NetworkRun> open(Engine& engine, const Platform& platform,
                                                         CollectivePlanner& planner,
                                                         std::vector<bool> keep_activity) const = 0;
};

// The registry: each model with its one-line description and source.
struct NetworkModelEntry {
  std::string_view name;
  std::string_view description;
  std::string_view source;
  std::shared_ptr<const NetworkModel> (*make)();
};
std::span<const NetworkModelEntry> network_models();
// The model called `name`, or null.
std::shared_ptr<const NetworkModel> find_network_model(std::string_view name);
// "analytical, flow" for messages.
std::string network_model_names();

}  // namespace ssgd::sim
