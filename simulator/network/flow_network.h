#pragma once
// The flow-level network model: transfers in flight share every link they
// cross by max-min fairness, and their rates change only when a transfer
// starts or ends somewhere they share a link with.
//
// Max-min fairness (Bertsekas and Gallager, "Data Networks", 2nd ed.,
// section 6.5.2) by progressive filling: all rates rise together; when a
// link fills, the flows through it freeze at its fair share, and the rest go
// on rising. A flow may also carry its own rate cap (a calibrated per-message
// bandwidth, say), which acts as a private link. Contention shows up where it
// arises: two flows on one link each get half of it, a shared PCIe switch,
// NIC or oversubscribed uplink slows everything through it.
//
// Incremental: a start or an end marks the links of that flow; one recompute
// event at the same instant gathers the connected component of flows that
// share links with the marked ones (transitively) and refills only those.
// Flows elsewhere keep their rates and their scheduled completion events.
// This is the approach of SimGrid's LMM solver ("lazy" updates, Casanova et
// al., JPDC 2014) without its generality.
//
// Rates are doubles in bytes per second; a flow's end is rounded up to the
// next whole nanosecond when it is scheduled.

#include <cstdint>
#include <limits>
#include <span>
#include <utility>
#include <vector>

#include "common/time.h"
#include "simulator/engine/engine.h"

namespace ssgd::sim {

class FlowListener {
 public:
  virtual ~FlowListener() = default;
  // A flow started with this listener and tag has delivered all its bytes.
  virtual void flow_finished(std::uint64_t tag) = 0;
};

struct LinkUsage {
  double bytes = 0;   // carried so far
  Duration busy;      // time with at least one flow on it
};

// One interval in which a link carried traffic, for timelines.
struct LinkActivity {
  std::uint32_t link = 0;
  Time start;
  Time end;
};

// What a network did with its usage counters while it recorded
// (FlowNetwork::record): every addition to a link's bytes, as the flow that
// made it (its number among the flows started since recording began) and
// the bytes, in order, and every busy spell added to a link.
struct UsageRecording {
  struct Bytes {
    std::uint32_t flow = 0;
    double bytes = 0;  // added to each link on the flow's route
  };
  std::vector<Bytes> bytes;
  std::vector<std::pair<std::uint32_t, std::int64_t>> busy;  // (link, ns)
};

class FlowNetwork {
 public:
  // One capacity (bytes per second, > 0) per link, indexed by link id.
  // `prune` leaves out of each fill the links that cannot be a bottleneck
  // (flow_network.cc); the results are the same either way (the tests
  // compare them).
  FlowNetwork(Engine& engine, const std::vector<double>& capacities, bool prune = true);
  FlowNetwork(const FlowNetwork&) = delete;
  FlowNetwork& operator=(const FlowNetwork&) = delete;

  // Starts a flow of `bytes` over `links` now; `listener->flow_finished(tag)`
  // runs when it has delivered them. `rate_cap` bounds its rate (infinity for
  // none). A flow over no links, or of no bytes, ends at once (in an event at
  // the current time, never inside this call).
  void start(std::span<const std::uint32_t> links, double bytes, double rate_cap,
             FlowListener* listener, std::uint64_t tag);

  // While `recording` is set (null stops), logs every change to the usage
  // counters into it; flows are numbered from 0 as they start from now on.
  void record(UsageRecording* recording) {
    recording_ = recording;
    recording_base_ = flows_started_;
  }
  // No flow in flight, nothing left to recompute, no activity kept: what
  // happens next depends only on what starts next.
  [[nodiscard]] bool idle() const {
    return active_ == 0 && !recompute_pending_ && dirty_.empty() && record_.empty();
  }
  // Replays what a recording of a run on an idle network of the same
  // links added (the flows' routes by their numbers), and counts what that
  // run counted: flows started, recomputations and links pruned.
  template <class RouteOf>
  void replay(const UsageRecording& recording, const RouteOf& route_of, std::uint64_t flows,
              std::uint64_t recomputations, std::uint64_t pruned) {
    for (const auto& b : recording.bytes) {
      for (auto l : route_of(b.flow)) usage_[l].bytes += b.bytes;
    }
    for (const auto& [link, ns] : recording.busy) usage_[link].busy += Duration(ns);
    flows_started_ += flows;
    recomputations_ += recomputations;
    links_pruned_ += pruned;
  }

  // Settles the usage counters up to now (call before reading them).
  void settle();
  [[nodiscard]] const std::vector<LinkUsage>& usage() const { return usage_; }

  // Keeps busy intervals of links with record[link] true, for timelines.
  void record_activity(std::vector<bool> record) { record_ = std::move(record); }
  [[nodiscard]] const std::vector<LinkActivity>& activity() const { return activity_; }

  [[nodiscard]] std::uint64_t flows_started() const { return flows_started_; }
  [[nodiscard]] std::uint64_t recomputations() const { return recomputations_; }
  // Links left out of fills for they could not be a bottleneck (`prune`).
  [[nodiscard]] std::uint64_t links_pruned() const { return links_pruned_; }
  [[nodiscard]] std::size_t active_flows() const { return active_; }

 private:
  using FlowId = std::uint32_t;
  struct Flow {
    std::uint32_t route_begin = 0;  // into route_pool_
    std::uint32_t route_size = 0;
    double remaining = 0;
    double rate = 0;
    double cap = std::numeric_limits<double>::infinity();
    double narrowest = 0;  // the smallest capacity on its route
    std::uint32_t serial = 0;  // its number since recording began
    std::uint64_t order = 0;   // its number among all flows started: ties of capped flows
    Time updated;  // when `remaining` was last brought up to date
    EventHandle completion;
    FlowListener* listener = nullptr;
    std::uint64_t tag = 0;
    std::uint32_t mark = 0;  // visit epoch of the last recompute that saw it
    bool active = false;
  };

  [[nodiscard]] std::span<const std::uint32_t> route(const Flow& f) const {
    return {route_pool_.data() + f.route_begin, f.route_size};
  }
  FlowId allocate(std::span<const std::uint32_t> links);
  void compact_routes();
  void release(FlowId id);
  void advance(Flow& f);  // delivers bytes at the current rate up to now
  void link_gains_flow(std::uint32_t link);
  void link_loses_flow(std::uint32_t link);
  void mark_dirty(std::uint32_t link);
  void finished(FlowId id);
  void recompute();
  void fill(const std::vector<std::uint32_t>& links, const std::vector<FlowId>& flows);
  void reschedule(FlowId id, double new_rate);

  // What a start, an end and a fill read of a link, in one cache line: a
  // step of a large collective touches tens of thousands of links at once.
  struct alignas(64) Link {
    std::vector<FlowId> flows;  // active flows on it
    double capacity = 0;
    Time busy_since;            // since when it has carried a flow
    double residual = 0;        // fill: capacity not yet given to frozen flows
    std::uint32_t unfrozen = 0;  // fill: flows on it still rising
    std::uint32_t mark = 0;     // visit epoch of the last recompute that saw it
    bool pruned = false;        // fill: left out of the heap (cannot bottleneck)
  };

  Engine& engine_;
  std::vector<Link> links_;
  std::vector<LinkUsage> usage_;
  std::vector<bool> record_;
  std::vector<LinkActivity> activity_;
  std::vector<Flow> flows_;
  std::vector<FlowId> free_flows_;
  std::vector<std::uint32_t> route_pool_;  // compacted when mostly dead
  std::size_t live_route_entries_ = 0;
  std::vector<std::uint32_t> dirty_;
  std::uint32_t epoch_ = 0;
  bool recompute_pending_ = false;
  HandlerId finish_handler_ = 0;
  HandlerId recompute_handler_ = 0;
  std::size_t active_ = 0;
  std::uint64_t flows_started_ = 0;
  std::uint64_t recomputations_ = 0;
  std::uint64_t links_pruned_ = 0;
  UsageRecording* recording_ = nullptr;
  std::uint64_t recording_base_ = 0;
  bool prune_ = true;
  // Scratch for recompute(), kept to avoid reallocation.
  std::vector<std::uint32_t> comp_links_;
  std::vector<FlowId> comp_flows_;
  std::vector<std::uint32_t> stack_;
  using ShareEntry = std::pair<double, std::uint32_t>;  // (fair share, link)
  std::vector<ShareEntry> shares_;
  std::vector<FlowId> by_cap_;
  std::vector<std::pair<FlowId, double>> new_rates_;
};

}  // namespace ssgd::sim
