#pragma once
// The v1 network model: analytical alpha-beta over the two link classes of a
// cluster, the link inside a node and the link between nodes, each a preset
// with optional overrides (simulator/scenario.h). Gradient all-reduce runs as
// one ring over all P = nodes x gpus_per_node workers; the ring crosses the
// inter-node link whenever there is more than one node and the intra-node
// link whenever a node holds more than one GPU, and the slowest of the links
// it crosses sets its pace.

#include <cstdint>
#include <string>

#include "common/time.h"
#include "simulator/scenario.h"

namespace ssgd::sim {

struct LinkParams {
  std::string name;                   // preset name, with "(overridden)" when changed
  Duration latency;                   // alpha
  double bandwidth_bytes_per_s = 0;   // 1/beta
};

// The preset with the choice's overrides applied. Throws std::invalid_argument
// for an unknown preset or a non-positive bandwidth.
LinkParams resolve_link(const LinkChoice& choice);

class NetworkModel {
 public:
  explicit NetworkModel(const Scenario& scenario);

  [[nodiscard]] std::int64_t workers() const { return workers_; }
  // The link that paces the ring (slowest bandwidth; with it, the largest latency).
  [[nodiscard]] const LinkParams& ring_link() const { return ring_; }
  [[nodiscard]] Duration allreduce_time(std::int64_t bytes) const;
  [[nodiscard]] std::string describe() const;

 private:
  std::int64_t workers_;
  LinkParams intra_;
  LinkParams inter_;
  LinkParams ring_;
  bool crosses_intra_ = false;
  bool crosses_inter_ = false;
};

}  // namespace ssgd::sim
