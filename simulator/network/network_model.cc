#include "simulator/network/network_model.h"

#include <stdexcept>

#include "common/units.h"
#include "simulator/collective/ring_allreduce.h"
#include "simulator/network/link_preset.h"

namespace ssgd::sim {

LinkParams resolve_link(const LinkChoice& choice) {
  const LinkPreset* preset = find_link_preset(choice.preset);
  if (preset == nullptr) {
    throw std::invalid_argument("unknown link preset '" + choice.preset +
                                "' (known: " + link_preset_names() + ")");
  }
  LinkParams p{std::string(preset->name), preset->latency, preset->bandwidth_bytes_per_s};
  if (choice.bandwidth_bytes_per_s || choice.latency) p.name += " (overridden)";
  if (choice.bandwidth_bytes_per_s) p.bandwidth_bytes_per_s = *choice.bandwidth_bytes_per_s;
  if (choice.latency) p.latency = *choice.latency;
  if (!(p.bandwidth_bytes_per_s > 0)) {
    throw std::invalid_argument("link '" + p.name + "' needs a positive bandwidth");
  }
  if (p.latency < Duration::zero()) {
    throw std::invalid_argument("link '" + p.name + "' has a negative latency");
  }
  return p;
}

NetworkModel::NetworkModel(const Scenario& scenario)
    : workers_(scenario.workers()),
      intra_(resolve_link(scenario.intra_node)),
      inter_(resolve_link(scenario.inter_node)) {
  crosses_intra_ = scenario.gpus_per_node > 1;
  crosses_inter_ = scenario.nodes > 1;
  if (crosses_inter_ && crosses_intra_) {
    // Lock-step ring: the slower link sets the bandwidth, the larger latency each step's start.
    ring_ = intra_.bandwidth_bytes_per_s < inter_.bandwidth_bytes_per_s ? intra_ : inter_;
    ring_.latency = max(intra_.latency, inter_.latency);
  } else if (crosses_inter_) {
    ring_ = inter_;
  } else {
    ring_ = intra_;
  }
}

Duration NetworkModel::allreduce_time(std::int64_t bytes) const {
  return ring_allreduce_time(workers_, bytes, ring_);
}

std::string NetworkModel::describe() const {
  if (workers_ == 1) return "single worker: no gradient communication";
  std::string s = "ring all-reduce over " + std::to_string(workers_) + " workers, paced by " +
                  ring_.name + " (" + format_rate(ring_.bandwidth_bytes_per_s) + ", " +
                  format_duration(ring_.latency) + " per step)";
  return s;
}

}  // namespace ssgd::sim
