#include "simulator/network/collective_runner.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace ssgd::sim {

CollectiveRunner::CollectiveRunner(Engine& engine, FlowNetwork& network, const Platform& platform,
                                   CollectivePlanner* planner)
    : engine_(engine),
      network_(network),
      own_planner_(planner == nullptr ? std::make_unique<CollectivePlanner>(platform) : nullptr),
      planner_(planner == nullptr ? *own_planner_ : *planner),
      streams_(platform.inter_node_streams()) {
  if (&planner_.platform() != &platform) {
    throw std::logic_error("a collective runner's planner plans for another platform");
  }
  inject_handler_ = engine_.register_handler(
      [this](Engine&, std::uint64_t id) { inject(static_cast<std::uint32_t>(id)); });
  done_handler_ = engine_.register_handler([this](Engine&, std::uint64_t id) {
    begin_step(static_cast<std::uint32_t>(id));
  });
}

void CollectiveRunner::run(const CollectiveCall& call, std::function<void()> done) {
  run(call, planner_.plan(call), std::move(done));
}

void CollectiveRunner::run(const CollectiveCall& call, std::shared_ptr<const CollectivePlan> plan,
                           std::function<void()> done) {
  if (plan == nullptr) throw std::logic_error("collective without a plan");
  const std::uint32_t id = instance();
  Instance& in = instances_[id];
  in.plan = std::move(plan);
  in.step = 0;
  in.outstanding = 0;
  in.done = std::move(done);
  in.band = call.band;
  in.band_inside = call.band_inside;
  ++started_;
  // Begin from an event, so `done` never runs inside run().
  engine_.schedule(engine_.now(), done_handler_, id);
}

std::uint32_t CollectiveRunner::instance() {
  if (!free_.empty()) {
    const std::uint32_t id = free_.back();
    free_.pop_back();
    return id;
  }
  instances_.emplace_back();
  return static_cast<std::uint32_t>(instances_.size() - 1);
}

void CollectiveRunner::run_alone(const CollectiveCall& call, std::function<void()> done) {
  auto plan = planner_.plan(call);
  const auto recorded = planner_.recording(plan.get());
  // (Nothing on the engine either: another collective between its steps
  // has no flows in flight yet.)
  if (recorded == nullptr || !network_.idle() || engine_.pending() != 0) {
    run(call, std::move(plan), std::move(done));
    return;
  }
  const CollectivePlan& p = *plan;
  network_.replay(
      recorded->usage,
      [&p](std::uint32_t flow) -> std::span<const LinkId> { return p.route[flow]->links; },
      recorded->flows, recorded->recomputations, recorded->pruned);
  const std::uint32_t id = instance();
  Instance& in = instances_[id];
  in.step = p.steps.size();  // begin_step then ends it
  in.outstanding = 0;
  in.done = std::move(done);
  in.band = call.band;
  in.band_inside = call.band_inside;
  in.plan = std::move(plan);
  ++started_;
  ++replayed_;
  // Its end as an event, like the last of the run's; the rest counted.
  engine_.schedule_after(recorded->duration, done_handler_, id);
  engine_.count_events(recorded->events - 1);
}

void CollectiveRunner::begin_step(std::uint32_t id) {
  Instance& in = instances_[id];
  if (in.step >= in.plan->steps.size()) {
    auto done = std::move(in.done);
    in.plan.reset();
    free_.push_back(id);
    done();
    return;
  }
  engine_.schedule_after(in.plan->steps[in.step].latency, inject_handler_, id);
}

void CollectiveRunner::inject(std::uint32_t id) {
  Instance& in = instances_[id];
  const CollectivePlan& plan = *in.plan;
  const CollectivePlan::Step& step = plan.steps[in.step];
  const double repeat = static_cast<double>(step.repeat);
  in.outstanding = static_cast<std::int64_t>(step.end - step.begin);
  if (in.outstanding == 0) {
    ++in.step;
    begin_step(id);
    return;
  }
  const double least_s = static_cast<double>(step.min_duration.ns()) * 1e-9;
  for (std::uint32_t t = step.begin; t < step.end; ++t) {
    const Route& r = *plan.route[t];
    const double bytes = plan.bytes[t];
    // Between nodes: the calibrated band's rate, which was measured with
    // everything the transport does; else the TCP streams' bound on one
    // transfer of this step's size.
    double cap = std::numeric_limits<double>::infinity();
    if (in.band != nullptr && r.crosses_nodes != in.band_inside) {
      cap = in.band->bandwidth_bytes_per_s;
    } else if (r.crosses_nodes) {
      const double connections = plan.connections.empty() ? 1.0 : plan.connections[t];
      cap = streams_.rate(bytes / connections, static_cast<std::int64_t>(connections));
    }
    // NCCL's per-channel caps: no flow ends before the step's least duration.
    if (least_s > 0) cap = std::min(cap, bytes * repeat / least_s);
    network_.start(r.links, bytes * repeat, cap, this, id);
  }
}

void CollectiveRunner::flow_finished(std::uint64_t tag) {
  const auto id = static_cast<std::uint32_t>(tag);
  Instance& in = instances_[id];
  if (--in.outstanding == 0) {
    ++in.step;
    begin_step(id);
  }
}

}  // namespace ssgd::sim
