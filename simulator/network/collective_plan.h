#pragma once
// A collective's steps with every transfer's route looked up and each step's
// start-up latency worked out: what the CollectiveRunner needs to start its
// flows. A profile's collectives repeat every iteration, and the flow
// model's isolated runs (CommModel::isolated_time) ask for each size again,
// so the planner keeps each call's plan, up to a budget of transfers: a
// 16,384-rank double binary tree is 65,532 transfers a call, and looking up
// their routes and decomposing the algorithm again cost a quarter of a flow
// run.

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "common/time.h"
#include "simulator/calibration/network_calibration.h"
#include "simulator/collective/collective.h"
#include "simulator/nccl/nccl_communicator.h"
#include "simulator/network/flow_network.h"
#include "simulator/platform/platform.h"

namespace ssgd::sim {

struct CollectiveCall {
  CollectiveOp op = CollectiveOp::kAllReduce;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::kRing;  // resolved, never kAuto
  CollectiveShape shape;
  double bytes = 0;
  // Ranks 0..P-1, then servers; owned by the caller while the call runs.
  const std::vector<VertexId>* endpoints = nullptr;
  const CalibrationBand* band = nullptr;  // calibrated costs, or null
  bool band_inside = false;  // the band is for transfers inside nodes, not between them
  // Run by NCCL (simulator/nccl): its communicator (owned by the caller, as
  // the endpoints) and what it chose for this call (algorithm, protocol,
  // channels, latency, efficiency, caps). Null: a textbook algorithm,
  // decompose()'s steps.
  const nccl::Communicator* nccl = nullptr;
  nccl::Choice choice;
  // Its time alone on the platform as CommModel estimates it (the
  // analytical model's answer).
  Duration estimate;
  // HSDP's collectives, run in several places at once on the planner's
  // platform (a model that runs calls on the job's links):
  //  - rails > 1: the all-reduces across the shard groups, one on each
  //    rail: copy j's rank m is endpoint j + m x rails, `shape` describes
  //    one copy (its ranks, one a node) and `endpoints` holds every copy's
  //    first. NCCL's (`nccl` and `choice` are one copy's, from a
  //    communicator on a platform of its own, whose traffic is not asked
  //    for) run as every copy's ring at the choice's pace, whatever its
  //    algorithm: a double binary tree's NIC bytes are a ring's within
  //    1 / ranks on average.
  //  - groups > 1: a shard group's collective in every group: copy j is the
  //    call's own transfers with every vertex j x group_nodes nodes on.
  std::int64_t rails = 1;
  std::int64_t groups = 1;
  std::int64_t group_nodes = 0;
};

struct CollectivePlan {
  struct Step {
    std::uint32_t begin = 0;  // its transfers: [begin, end) of route and bytes
    std::uint32_t end = 0;
    std::int64_t repeat = 1;
    // Before its flows start: repeat x the largest latency of its routes (a
    // calibrated band's for routes between nodes); NCCL's latency for NCCL's.
    Duration latency;
    // The least time its flows take: each flow is capped at its bytes over
    // this, so that all of them move at one pace, as the stages of NCCL's
    // pipelines do (NCCL's plans: the call's time alone less its latency).
    // Zero: no such bound (textbook steps).
    Duration min_duration;
  };
  std::vector<Step> steps;
  std::vector<const Route*> route;  // per transfer: its route, kept by the planner
  std::vector<double> bytes;        // per transfer: one repeat's bytes
  // Per transfer: the connections it stands for (NCCL's channels merged
  // into one flow), each striped over the TCP streams on its own; empty:
  // one each.
  std::vector<std::uint16_t> connections;
  bool crosses_nodes = false;        // some transfer goes from one node to another

  [[nodiscard]] std::size_t transfers() const { return route.size(); }
};

// A collective's run alone on an idle flow network (CommModel's isolated
// runs), recorded: replaying it on an idle network of the same links, where
// nothing else happens until it ends, gives what running it again would
// give: its end, every link's bytes (added in the same order) and busy time,
// and the events and flows counted (CollectiveRunner::run_alone).
struct CollectiveRecording {
  Duration duration;
  std::uint64_t events = 0;
  std::uint64_t flows = 0;
  std::uint64_t recomputations = 0;
  std::uint64_t pruned = 0;
  UsageRecording usage;  // busy: one entry a link, summed

  [[nodiscard]] std::size_t bytes() const {
    return usage.bytes.size() * sizeof(UsageRecording::Bytes) +
           usage.busy.size() * sizeof(decltype(usage.busy)::value_type);
  }
};

class CollectivePlanner {
 public:
  // Plans are kept while their transfers sum to at most `budget_transfers`
  // (16 bytes each); past it, each call is planned anew.
  static constexpr std::size_t kDefaultBudget = std::size_t{1} << 22;
  explicit CollectivePlanner(const Platform& platform,
                             std::size_t budget_transfers = kDefaultBudget);
  CollectivePlanner(const CollectivePlanner&) = delete;
  CollectivePlanner& operator=(const CollectivePlanner&) = delete;

  // `call`'s plan: kept from an earlier call with the same operation,
  // algorithm, shape, bytes, endpoints and band (compared by value), or made
  // now.
  std::shared_ptr<const CollectivePlan> plan(const CollectiveCall& call);

  // The recording of a kept plan's run alone, or null; a recording is kept
  // for a kept plan while recordings hold at most kRecordingBudget bytes.
  static constexpr std::size_t kRecordingBudget = std::size_t{256} << 20;
  [[nodiscard]] std::shared_ptr<const CollectiveRecording> recording(const CollectivePlan* plan) const;
  [[nodiscard]] bool keeps(const CollectivePlan* plan) const { return kept_.contains(plan); }
  void keep_recording(const CollectivePlan* plan, std::shared_ptr<const CollectiveRecording> r);

  [[nodiscard]] const Platform& platform() const { return platform_; }
  [[nodiscard]] std::size_t kept_transfers() const { return kept_transfers_; }
  // The routes plans point to (the analytical model reads the same).
  [[nodiscard]] RouteCache& routes() { return routes_; }

 private:
  // Operation, algorithm, shape, bytes, the endpoints' set (an index into
  // endpoint_sets_), the band's latency and rate (-1 for none), and NCCL's
  // choice: communicator, protocol, channels, latency, efficiencies and
  // least duration (zeros for a textbook algorithm).
  using Key = std::tuple<int, int, std::int64_t, std::int64_t, std::int64_t, bool, std::int64_t,
                         std::int64_t, double, std::uint32_t, std::int64_t, double, bool,
                         const nccl::Communicator*, int, int, std::int64_t, double, double,
                         std::int64_t, std::int64_t, std::int64_t, std::int64_t>;
  [[nodiscard]] std::shared_ptr<const CollectivePlan> make(const CollectiveCall& call);
  [[nodiscard]] std::shared_ptr<const CollectivePlan> make_nccl(const CollectiveCall& call);
  [[nodiscard]] std::shared_ptr<const CollectivePlan> make_rails(const CollectiveCall& call);
  // Vertex `v` of the call's first copy in copy `copy` (groups: moved
  // copy x group_nodes nodes on).
  [[nodiscard]] VertexId in_copy(const CollectiveCall& call, std::int64_t copy, VertexId v) const;
  // The vertex of endpoint `endpoint` (a rank, or a server) in copy `copy`
  // (rails: endpoint copy + endpoint x rails; groups: in_copy).
  [[nodiscard]] VertexId copy_end(const CollectiveCall& call, std::int64_t copy,
                                  std::int64_t endpoint) const;

  const Platform& platform_;
  std::size_t budget_;
  std::size_t kept_transfers_ = 0;
  RouteCache routes_;  // the routes plans point to: kept as long as the planner
  std::map<std::vector<VertexId>, std::uint32_t> endpoint_sets_;
  std::map<Key, std::shared_ptr<const CollectivePlan>> plans_;
  std::unordered_map<const CollectivePlan*, std::shared_ptr<const CollectiveRecording>> kept_;
  std::size_t recording_bytes_ = 0;
};

}  // namespace ssgd::sim
