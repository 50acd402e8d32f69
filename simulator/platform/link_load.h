#pragma once
// Bytes on a platform's links, added route by route: what a collective (or
// one step of it) puts on each link, and the time its busiest link needs for
// them. No schedule of those transfers ends sooner; a pipelined collective
// (NCCL's channels, a ring's repeated step) ends about then. The analytical
// network model charges shared links with it (simulator/network), and NCCL's
// tuning reads the communicator's bandwidth off it (simulator/nccl).

#include <cstdint>
#include <vector>

#include "simulator/platform/platform.h"

namespace ssgd::sim {

class LinkLoad {
 public:
  explicit LinkLoad(const Platform& platform);

  void add(const Route& route, double bytes);
  // Back to no bytes (only the links touched are reset).
  void clear();
  // The largest bytes / capacity over the links, seconds; 0 with none.
  [[nodiscard]] double busiest_seconds() const;
  // Bytes per link, indexed by link id.
  [[nodiscard]] const std::vector<double>& bytes() const { return bytes_; }
  // Adds `scale` x this load's bytes into `into` (one entry per link).
  void add_to(std::vector<double>& into, double scale) const;

 private:
  std::vector<double> capacity_;
  std::vector<double> bytes_;
  std::vector<std::uint32_t> touched_;
};

}  // namespace ssgd::sim
