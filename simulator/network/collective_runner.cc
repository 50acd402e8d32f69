#include "simulator/network/collective_runner.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace ssgd::sim {

CollectiveRunner::CollectiveRunner(Engine& engine, FlowNetwork& network, const Platform& platform)
    : engine_(engine),
      network_(network),
      platform_(platform),
      streams_(platform.inter_node_streams()),
      routes_(platform) {
  inject_handler_ = engine_.register_handler(
      [this](Engine&, std::uint64_t id) { inject(static_cast<std::uint32_t>(id)); });
  done_handler_ = engine_.register_handler([this](Engine&, std::uint64_t id) {
    begin_step(static_cast<std::uint32_t>(id));
  });
}

void CollectiveRunner::run(const CollectiveCall& call, std::function<void()> done) {
  if (call.endpoints == nullptr) throw std::logic_error("collective without endpoints");
  std::uint32_t id = 0;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
  } else {
    id = static_cast<std::uint32_t>(instances_.size());
    instances_.emplace_back();
  }
  Instance& in = instances_[id];
  in.steps = decompose(call.op, call.algorithm, call.shape, call.bytes);
  in.step = 0;
  in.outstanding = 0;
  in.done = std::move(done);
  in.endpoints = call.endpoints;
  in.band = call.band;
  ++started_;
  // Begin from an event, so `done` never runs inside run().
  engine_.schedule(engine_.now(), done_handler_, id);
}

void CollectiveRunner::begin_step(std::uint32_t id) {
  Instance& in = instances_[id];
  if (in.step >= in.steps.size()) {
    auto done = std::move(in.done);
    in.steps.clear();
    free_.push_back(id);
    done();
    return;
  }
  const CollectiveStep& step = in.steps[in.step];
  Duration latency;
  for (const auto& t : step.transfers) {
    const Route& r = routes_.get((*in.endpoints)[static_cast<std::size_t>(t.src)],
                           (*in.endpoints)[static_cast<std::size_t>(t.dst)]);
    latency = max(latency, r.crosses_nodes && in.band != nullptr ? in.band->latency : r.latency);
  }
  engine_.schedule_after(latency * step.repeat, inject_handler_, id);
}

void CollectiveRunner::inject(std::uint32_t id) {
  Instance& in = instances_[id];
  const CollectiveStep& step = in.steps[in.step];
  const double repeat = static_cast<double>(step.repeat);
  in.outstanding = static_cast<std::int64_t>(step.transfers.size());
  if (in.outstanding == 0) {
    ++in.step;
    begin_step(id);
    return;
  }
  for (const auto& t : step.transfers) {
    const Route& r = routes_.get((*in.endpoints)[static_cast<std::size_t>(t.src)],
                           (*in.endpoints)[static_cast<std::size_t>(t.dst)]);
    // Between nodes: the calibrated band's rate, which was measured with
    // everything the transport does; else the TCP streams' bound on one
    // transfer of this step's size.
    double cap = std::numeric_limits<double>::infinity();
    if (r.crosses_nodes) cap = in.band != nullptr ? in.band->bandwidth_bytes_per_s : streams_.rate(t.bytes);
    network_.start(r.links, t.bytes * repeat, cap, this, id);
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
