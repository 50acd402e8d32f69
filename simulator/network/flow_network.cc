#include "simulator/network/flow_network.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace ssgd::sim {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// A link's share may sink below its first value by rounding, a few units in
// the last place per flow frozen on it; 1e-3 covers a billion flows.
constexpr double kPruneMargin = 1 - 1e-3;

// Whole nanoseconds to deliver `bytes` at `rate`, rounded up so a flow never
// ends before its bytes are through; at least 1 ns for a non-empty flow.
Duration time_to_deliver(double bytes, double rate) {
  if (bytes <= 0) return Duration::zero();
  const double ns = std::ceil(bytes / rate * 1e9);
  if (!(ns < 9e18)) return Duration(std::numeric_limits<std::int64_t>::max() / 4);
  return Duration(std::max<std::int64_t>(1, static_cast<std::int64_t>(ns)));
}

}  // namespace

FlowNetwork::FlowNetwork(Engine& engine, const std::vector<double>& capacities, bool prune)
    : engine_(engine), prune_(prune) {
  for (double c : capacities) {
    if (!(c > 0) || !std::isfinite(c)) {
      throw std::invalid_argument("every link of a flow network needs a positive, finite capacity");
    }
  }
  links_.resize(capacities.size());
  for (std::size_t l = 0; l < links_.size(); ++l) links_[l].capacity = capacities[l];
  usage_.resize(capacities.size());
  finish_handler_ = engine_.register_handler(
      [this](Engine&, std::uint64_t id) { finished(static_cast<FlowId>(id)); });
  recompute_handler_ = engine_.register_handler([this](Engine&, std::uint64_t) { recompute(); });
}

FlowNetwork::FlowId FlowNetwork::allocate(std::span<const std::uint32_t> links) {
  if (route_pool_.size() > (1u << 20) && route_pool_.size() > 4 * live_route_entries_) {
    compact_routes();
  }
  FlowId id = 0;
  if (!free_flows_.empty()) {
    id = free_flows_.back();
    free_flows_.pop_back();
  } else {
    id = static_cast<FlowId>(flows_.size());
    flows_.emplace_back();
  }
  Flow& f = flows_[id];
  f = Flow{};
  f.route_begin = static_cast<std::uint32_t>(route_pool_.size());
  f.route_size = static_cast<std::uint32_t>(links.size());
  route_pool_.insert(route_pool_.end(), links.begin(), links.end());
  live_route_entries_ += links.size();
  return id;
}

void FlowNetwork::compact_routes() {
  std::vector<std::uint32_t> pool;
  pool.reserve(live_route_entries_ * 2);
  for (auto& f : flows_) {
    if (!f.active) continue;
    const auto r = route(f);
    const auto begin = static_cast<std::uint32_t>(pool.size());
    pool.insert(pool.end(), r.begin(), r.end());
    f.route_begin = begin;
  }
  route_pool_ = std::move(pool);
}

void FlowNetwork::release(FlowId id) {
  Flow& f = flows_[id];
  f.active = false;
  live_route_entries_ -= f.route_size;
  f.route_size = 0;
  free_flows_.push_back(id);
}

void FlowNetwork::start(std::span<const std::uint32_t> links, double bytes, double rate_cap,
                        FlowListener* listener, std::uint64_t tag) {
  double narrowest = kInf;
  for (auto l : links) {
    if (l >= links_.size()) throw std::out_of_range("flow over a link the network does not have");
    narrowest = std::min(narrowest, links_[l].capacity);
  }
  if (!(rate_cap > 0)) throw std::invalid_argument("a flow's rate cap must be positive");
  const FlowId id = allocate(links);
  Flow& f = flows_[id];
  f.remaining = std::max(0.0, bytes);
  f.cap = rate_cap;
  f.narrowest = narrowest;
  f.serial = static_cast<std::uint32_t>(flows_started_ - recording_base_);
  f.order = flows_started_;
  f.updated = engine_.now();
  f.listener = listener;
  f.tag = tag;
  f.active = true;
  ++active_;
  ++flows_started_;
  if (links.empty() || f.remaining <= 0) {
    // Nothing to share: it ends at its own cap (or at once).
    f.rate = std::isfinite(rate_cap) ? rate_cap : kInf;
    const Duration d = std::isfinite(f.rate) ? time_to_deliver(f.remaining, f.rate) : Duration::zero();
    f.completion = engine_.schedule_after(d, finish_handler_, id);
    return;
  }
  for (auto l : route(f)) {
    links_[l].flows.push_back(id);
    link_gains_flow(l);
    mark_dirty(l);
  }
}

void FlowNetwork::link_gains_flow(std::uint32_t link) {
  if (links_[link].flows.size() == 1) links_[link].busy_since = engine_.now();
}

void FlowNetwork::link_loses_flow(std::uint32_t link) {
  const Link& k = links_[link];
  if (!k.flows.empty()) return;
  usage_[link].busy += engine_.now() - k.busy_since;
  if (recording_ != nullptr) recording_->busy.emplace_back(link, (engine_.now() - k.busy_since).ns());
  if (!record_.empty() && record_[link] && engine_.now() > k.busy_since) {
    activity_.push_back({link, k.busy_since, engine_.now()});
  }
}

void FlowNetwork::mark_dirty(std::uint32_t link) {
  dirty_.push_back(link);
  if (!recompute_pending_) {
    recompute_pending_ = true;
    engine_.schedule(engine_.now(), recompute_handler_, 0);
  }
}

void FlowNetwork::advance(Flow& f) {
  const Time now = engine_.now();
  if (now == f.updated) return;
  const double dt = static_cast<double>((now - f.updated).ns()) * 1e-9;
  const double delivered = std::min(f.remaining, f.rate * dt);
  f.remaining -= delivered;
  f.updated = now;
  for (auto l : route(f)) usage_[l].bytes += delivered;
  if (recording_ != nullptr && delivered != 0) recording_->bytes.push_back({f.serial, delivered});
}

void FlowNetwork::finished(FlowId id) {
  Flow& f = flows_[id];
  advance(f);
  if (recording_ != nullptr && f.remaining != 0) recording_->bytes.push_back({f.serial, f.remaining});
  for (auto l : route(f)) {
    usage_[l].bytes += f.remaining;  // rounding remainder
    auto& v = links_[l].flows;
    const auto it = std::find(v.begin(), v.end(), id);
    if (it != v.end()) {
      *it = v.back();
      v.pop_back();
    }
    link_loses_flow(l);
    mark_dirty(l);
  }
  f.remaining = 0;
  FlowListener* listener = f.listener;
  const std::uint64_t tag = f.tag;
  --active_;
  release(id);
  if (listener != nullptr) listener->flow_finished(tag);
}

void FlowNetwork::recompute() {
  recompute_pending_ = false;
  if (dirty_.empty()) return;
  ++recomputations_;
  ++epoch_;
  if (epoch_ == 0) {  // wrapped: clear the marks
    for (auto& k : links_) k.mark = 0;
    for (auto& f : flows_) f.mark = 0;
    epoch_ = 1;
  }
  // The connected component(s) of the dirty links: links and flows reachable
  // through shared links.
  comp_links_.clear();
  comp_flows_.clear();
  auto& stack = stack_;
  stack.clear();
  for (auto l : dirty_) {
    if (links_[l].mark == epoch_) continue;
    links_[l].mark = epoch_;
    stack.push_back(l);
  }
  dirty_.clear();
  while (!stack.empty()) {
    const auto l = stack.back();
    stack.pop_back();
    comp_links_.push_back(l);
    for (FlowId id : links_[l].flows) {
      Flow& f = flows_[id];
      if (f.mark == epoch_) continue;
      f.mark = epoch_;
      comp_flows_.push_back(id);
      for (auto m : route(f)) {
        if (links_[m].mark == epoch_) continue;
        links_[m].mark = epoch_;
        stack.push_back(m);
      }
    }
  }
  for (FlowId id : comp_flows_) advance(flows_[id]);
  fill(comp_links_, comp_flows_);
}

// Progressive filling over one component. Links are taken in order of their
// fair share (residual capacity / flows still rising), lowest first, ties by
// link id; a flow whose own cap is below the current share freezes at its cap
// first.
//
// A link l of n flows whose every flow also crosses a link m of capacity
// below cap_l / n (with a margin for rounding) is never taken: l's share
// starts at cap_l / n and only rises as its flows freeze below it, while
// m's share stays at most cap_m as long as the flow is rising, so m comes
// first and freezes it. Such links stay out of the heap (`pruned_`): the
// links taken, their order and every rate are the same.
void FlowNetwork::fill(const std::vector<std::uint32_t>& links, const std::vector<FlowId>& flows) {
  // A min-heap of (share, link), made at once (every entry is distinct, so
  // it pops in the same order as one pushed an entry at a time).
  auto& shares = shares_;
  shares.clear();
  for (auto l : links) {
    Link& k = links_[l];
    const auto n = static_cast<std::uint32_t>(k.flows.size());
    k.residual = k.capacity;
    k.unfrozen = n;
    bool prune = false;
    if (n > 0 && prune_) {
      const double below = k.capacity / n * kPruneMargin;
      prune = std::all_of(k.flows.begin(), k.flows.end(),
                          [&](FlowId id) { return flows_[id].narrowest < below; });
    }
    k.pruned = prune;
    links_pruned_ += prune ? 1 : 0;
    if (n > 0 && !prune) shares.push_back({k.residual / n, l});
  }
  std::make_heap(shares.begin(), shares.end(), std::greater<>());
  const auto push = [&shares](ShareEntry e) {
    shares.push_back(e);
    std::push_heap(shares.begin(), shares.end(), std::greater<>());
  };
  const auto pop = [&shares] {
    std::pop_heap(shares.begin(), shares.end(), std::greater<>());
    shares.pop_back();
  };
  auto& by_cap = by_cap_;
  by_cap.clear();
  for (FlowId id : flows) {
    if (std::isfinite(flows_[id].cap)) by_cap.push_back(id);
  }
  std::sort(by_cap.begin(), by_cap.end(), [this](FlowId a, FlowId b) {
    // Ties in start order, not by the slot a flow got: a run then does not
    // depend on which slots earlier flows left free (CollectiveRecording).
    return flows_[a].cap != flows_[b].cap ? flows_[a].cap < flows_[b].cap : flows_[a].order < flows_[b].order;
  });
  std::size_t next_cap = 0;
  // Epoch + 1 marks a frozen flow within this fill; the component mark is epoch_.
  const std::uint32_t frozen = epoch_ + 0x80000000u;
  auto& new_rates = new_rates_;
  new_rates.clear();
  const auto freeze = [&](FlowId id, double rate) {
    Flow& f = flows_[id];
    f.mark = frozen;
    new_rates.push_back({id, rate});
    for (auto l : route(f)) {
      Link& k = links_[l];
      k.residual = std::max(0.0, k.residual - rate);
      --k.unfrozen;
      if (k.unfrozen > 0 && !k.pruned) push({k.residual / k.unfrozen, l});
    }
  };
  std::size_t remaining = flows.size();
  while (remaining > 0) {
    // Drop stale heap entries.
    while (!shares.empty()) {
      const auto [s, l] = shares.front();
      const Link& k = links_[l];
      if (k.unfrozen > 0 && s == k.residual / k.unfrozen) break;
      pop();
    }
    while (next_cap < by_cap.size() && flows_[by_cap[next_cap]].mark == frozen) ++next_cap;
    const double link_share = shares.empty() ? kInf : shares.front().first;
    if (next_cap < by_cap.size() && flows_[by_cap[next_cap]].cap <= link_share) {
      freeze(by_cap[next_cap], flows_[by_cap[next_cap]].cap);
      ++next_cap;
      --remaining;
      continue;
    }
    if (shares.empty()) break;  // cannot happen: every flow crosses a link
    const auto [share, l] = shares.front();
    pop();
    // Every flow still rising on l freezes at l's share.
    for (FlowId id : links_[l].flows) {
      if (flows_[id].mark == frozen) continue;
      freeze(id, share);
      --remaining;
    }
  }
  for (const auto& [id, rate] : new_rates) {
    flows_[id].mark = epoch_;
    reschedule(id, rate);
  }
}

void FlowNetwork::reschedule(FlowId id, double new_rate) {
  Flow& f = flows_[id];
  const bool scheduled = f.rate > 0;
  if (scheduled && new_rate == f.rate) return;
  if (scheduled) engine_.cancel(f.completion);
  f.rate = new_rate;
  f.completion = engine_.schedule_after(time_to_deliver(f.remaining, new_rate), finish_handler_, id);
}

void FlowNetwork::settle() {
  for (auto& f : flows_) {
    if (f.active) advance(f);
  }
  for (std::uint32_t l = 0; l < links_.size(); ++l) {
    if (!links_[l].flows.empty()) {
      usage_[l].busy += engine_.now() - links_[l].busy_since;
      links_[l].busy_since = engine_.now();
    }
  }
}

}  // namespace ssgd::sim
