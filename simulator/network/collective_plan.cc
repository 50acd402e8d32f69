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
  const nccl::Choice& c = call.choice;
  const bool n = call.nccl != nullptr;
  const Key key{static_cast<int>(call.op),
                static_cast<int>(call.algorithm),
                s.ranks,
                s.ranks_per_node,
                s.servers,
                s.servers_colocated,
                s.cpu_servers,
                s.root,
                call.bytes,
                set,
                b != nullptr ? b->latency.ns() : -1,
                b != nullptr ? b->bandwidth_bytes_per_s : -1.0,
                call.band_inside,
                call.nccl,
                n ? static_cast<int>(c.proto) : -1,
                n ? c.channels : 0,
                n ? c.latency.ns() : 0,
                n ? c.efficiency : 0.0,
                n ? c.nvls_efficiency : 0.0,
                n ? c.time.ns() : 0,
                call.rails,
                call.groups,
                call.group_nodes};
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

std::shared_ptr<const CollectivePlan> CollectivePlanner::make_nccl(const CollectiveCall& call) {
  const auto func = nccl::func_of(call.op);
  if (!func) throw std::logic_error("an NCCL plan for an operation NCCL does not have");
  const nccl::Choice& c = call.choice;
  const nccl::Traffic traffic = call.nccl->traffic(*func, c.algo, c.channels, call.shape.root);
  auto p = std::make_shared<CollectivePlan>();
  if (traffic.transfers.size() * static_cast<std::size_t>(call.groups) >=
      std::numeric_limits<std::uint32_t>::max()) {
    throw std::length_error("a collective of more transfers than a plan can index");
  }
  p->route.reserve(traffic.transfers.size());
  p->bytes.reserve(traffic.transfers.size());
  CollectivePlan::Step step;
  step.latency = c.latency;
  // NCCL's channels are pipelines: every transfer moves at the pace of the
  // slowest, so the step takes its time alone less the latency (the
  // busiest link's time, or NCCL's caps) when nothing else shares a link.
  step.min_duration = c.time - c.latency;
  for (std::int64_t j = 0; j < call.groups; ++j) {
    for (const nccl::RoutedTransfer& t : traffic.transfers) {
      const Route& route = routes_.get(in_copy(call, j, t.src), in_copy(call, j, t.dst), t.via);
      p->route.push_back(&route);
      p->bytes.push_back(t.bytes * call.bytes / c.efficiency / (t.nvls ? c.nvls_efficiency : 1.0));
      p->connections.push_back(static_cast<std::uint16_t>(std::min(t.connections, 65535)));
      p->crosses_nodes = p->crosses_nodes || route.crosses_nodes;
    }
  }
  step.end = static_cast<std::uint32_t>(p->route.size());
  if (call.bytes > 0 && step.end > 0) p->steps.push_back(step);
  return p;
}

std::shared_ptr<const CollectivePlan> CollectivePlanner::make(const CollectiveCall& call) {
  if (call.rails > 1 &&
      (call.groups != 1 || call.shape.ranks_per_node != 1 ||
       call.endpoints->size() < static_cast<std::size_t>(call.rails * call.shape.ranks))) {
    throw std::logic_error("rails of a collective need one rank a node and every rail's ends");
  }
  if (call.nccl != nullptr) return call.rails > 1 ? make_rails(call) : make_nccl(call);
  auto p = std::make_shared<CollectivePlan>();
  const std::vector<CollectiveStep> steps =
      decompose(call.op, call.algorithm, call.shape, call.bytes);
  // A textbook algorithm's steps, each with every copy's transfers.
  const std::int64_t copies = call.rails > 1 ? call.rails : call.groups;
  std::size_t transfers = 0;
  for (const auto& step : steps) transfers += step.transfers.size();
  transfers *= static_cast<std::size_t>(copies);
  if (transfers >= std::numeric_limits<std::uint32_t>::max()) {
    throw std::length_error("a collective of more transfers than a plan can index");
  }
  p->route.reserve(transfers);
  p->bytes.reserve(transfers);
  p->steps.reserve(steps.size());
  for (const auto& step : steps) {
    CollectivePlan::Step planned;
    planned.begin = static_cast<std::uint32_t>(p->route.size());
    planned.repeat = step.repeat;
    Duration latency;
    for (std::int64_t j = 0; j < copies; ++j) {
      for (const auto& t : step.transfers) {
        const Route& route = routes_.get(copy_end(call, j, t.src), copy_end(call, j, t.dst));
        const bool banded = call.band != nullptr && route.crosses_nodes != call.band_inside;
        latency = max(latency, banded ? call.band->latency : route.latency);
        p->route.push_back(&route);
        p->bytes.push_back(t.bytes);
        p->crosses_nodes = p->crosses_nodes || route.crosses_nodes;
      }
    }
    planned.latency = latency * step.repeat;
    planned.end = static_cast<std::uint32_t>(p->route.size());
    p->steps.push_back(planned);
  }
  return p;
}

VertexId CollectivePlanner::in_copy(const CollectiveCall& call, std::int64_t copy,
                                    VertexId v) const {
  if (copy == 0) return v;
  const auto moved = platform_.shifted_vertex(v, copy * call.group_nodes);
  if (!moved) throw std::logic_error("a copy of a collective past the platform's last node");
  return *moved;
}

VertexId CollectivePlanner::copy_end(const CollectiveCall& call, std::int64_t copy,
                                     std::int64_t endpoint) const {
  const std::vector<VertexId>& ends = *call.endpoints;
  if (call.rails == 1) return in_copy(call, copy, ends.at(static_cast<std::size_t>(endpoint)));
  if (endpoint >= call.shape.ranks) throw std::logic_error("rails of a collective with servers");
  return ends.at(static_cast<std::size_t>(copy + endpoint * call.rails));
}

std::shared_ptr<const CollectivePlan> CollectivePlanner::make_rails(const CollectiveCall& call) {
  // Every rail's ring at once, paced as NCCL's pipeline (make_nccl): each
  // rank sends its share of the ring's steps to the next.
  const std::int64_t ranks = call.shape.ranks;
  double share = 0;
  switch (call.op) {
    case CollectiveOp::kAllReduce: share = 2.0 * static_cast<double>(ranks - 1); break;
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kAllGather: share = static_cast<double>(ranks - 1); break;
    default: throw std::logic_error("rails of an NCCL collective other than a ring's");
  }
  const nccl::Choice& c = call.choice;
  auto p = std::make_shared<CollectivePlan>();
  CollectivePlan::Step step;
  step.latency = c.latency;
  step.min_duration = c.time - c.latency;
  const double bytes = share / static_cast<double>(ranks) * call.bytes / c.efficiency;
  for (std::int64_t j = 0; j < call.rails; ++j) {
    for (std::int64_t m = 0; m < ranks; ++m) {
      const Route& route = routes_.get(copy_end(call, j, m), copy_end(call, j, (m + 1) % ranks));
      p->route.push_back(&route);
      p->bytes.push_back(bytes);
      p->connections.push_back(static_cast<std::uint16_t>(std::min(c.channels, 65535)));
      p->crosses_nodes = p->crosses_nodes || route.crosses_nodes;
    }
  }
  step.end = static_cast<std::uint32_t>(p->route.size());
  if (call.bytes > 0 && step.end > 0) p->steps.push_back(step);
  return p;
}

}  // namespace ssgd::sim
