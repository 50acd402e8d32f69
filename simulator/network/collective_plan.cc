#include "simulator/network/collective_plan.h"

#include <limits>
#include <stdexcept>

namespace ssgd::sim {

CollectivePlanner::CollectivePlanner(const Platform& platform, std::size_t budget_transfers)
    : platform_(platform), budget_(budget_transfers), routes_(platform) {}

std::shared_ptr<const CollectivePlan> CollectivePlanner::plan(const CollectiveCall& call) {
  if (call.endpoints == nullptr) throw std::logic_error("collective without endpoints");
  const CollectiveShape& s = call.shape;
  const auto set = endpoint_sets_
                       .try_emplace(*call.endpoints, static_cast<std::uint32_t>(endpoint_sets_.size()))
                       .first->second;
  const CalibrationBand* b = call.band;
  const Key key{static_cast<int>(call.op), static_cast<int>(call.algorithm), s.ranks,
                s.ranks_per_node, s.servers, s.servers_colocated, s.cpu_servers, s.root,
                call.bytes, set, b != nullptr ? b->latency.ns() : -1,
                b != nullptr ? b->bandwidth_bytes_per_s : -1.0};
  if (const auto it = plans_.find(key); it != plans_.end()) return it->second;
  auto p = make(call);
  if (kept_transfers_ + p->transfers() <= budget_) {
    kept_transfers_ += p->transfers();
    plans_.emplace(key, p);
    kept_.emplace(p.get(), nullptr);
  }
  return p;
}

std::shared_ptr<const CollectiveRecording> CollectivePlanner::recording(
    const CollectivePlan* plan) const {
  const auto it = kept_.find(plan);
  return it == kept_.end() ? nullptr : it->second;
}

void CollectivePlanner::keep_recording(const CollectivePlan* plan,
                                       std::shared_ptr<const CollectiveRecording> r) {
  const auto it = kept_.find(plan);
  if (it == kept_.end() || it->second != nullptr || r == nullptr) return;
  if (recording_bytes_ + r->bytes() > kRecordingBudget) return;
  recording_bytes_ += r->bytes();
  it->second = std::move(r);
}

bool runs_uncapped(const CollectiveCall& call, const CollectivePlan& plan,
                   const StreamCap& streams) {
  return !plan.crosses_nodes || (call.band == nullptr && !streams.on());
}

std::shared_ptr<const CollectivePlan> CollectivePlanner::make(const CollectiveCall& call) {
  auto p = std::make_shared<CollectivePlan>();
  const std::vector<CollectiveStep> steps =
      decompose(call.op, call.algorithm, call.shape, call.bytes);
  std::size_t transfers = 0;
  for (const auto& step : steps) transfers += step.transfers.size();
  if (transfers >= std::numeric_limits<std::uint32_t>::max()) {
    throw std::length_error("a collective of more transfers than a plan can index");
  }
  p->route.reserve(transfers);
  p->bytes.reserve(transfers);
  p->steps.reserve(steps.size());
  const std::vector<VertexId>& ends = *call.endpoints;
  for (const auto& step : steps) {
    CollectivePlan::Step planned;
    planned.begin = static_cast<std::uint32_t>(p->route.size());
    planned.repeat = step.repeat;
    Duration latency;
    for (const auto& t : step.transfers) {
      const Route& route = routes_.get(ends.at(static_cast<std::size_t>(t.src)),
                                       ends.at(static_cast<std::size_t>(t.dst)));
      latency = max(latency, route.crosses_nodes && call.band != nullptr ? call.band->latency
                                                                         : route.latency);
      p->route.push_back(&route);
      p->bytes.push_back(t.bytes);
      p->crosses_nodes = p->crosses_nodes || route.crosses_nodes;
    }
    planned.latency = latency * step.repeat;
    planned.end = static_cast<std::uint32_t>(p->route.size());
    p->steps.push_back(planned);
  }
  return p;
}

}  // namespace ssgd::sim
