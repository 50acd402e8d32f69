#pragma once
// A network calibration file: per-size-band alpha-beta costs fitted to
// measurements by `ssgd calibrate` (docs/calibration.md).

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "common/time.h"
#include "simulator/collective/collective.h"

namespace ssgd::sim {

// Bands are sorted; the last has max_bytes = +inf. A collective of M bytes
// uses the first band with M <= max_bytes.
struct CalibrationBand {
  double max_bytes = 0;
  Duration latency;
  double bandwidth_bytes_per_s = 0;
  std::int64_t points = 0;
  double median_error = 0;
  double max_error = 0;
};

struct CalibratedCollective {
  CollectiveOp op = CollectiveOp::kAllReduce;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::kRing;
  std::vector<std::int64_t> ranks;
  std::vector<std::string> sources;
  std::vector<CalibrationBand> bands;
  [[nodiscard]] const CalibrationBand& band_for(double bytes) const;
};

struct NetworkCalibration {
  std::string level;  // inter_node | intra_node
  std::vector<CalibratedCollective> collectives;
  // The fit for `op` that covers `ranks` (a fit made for exactly that rank
  // count first, then one over several), or the first for `op` with
  // ranks = 0; null when none is for `op`.
  [[nodiscard]] const CalibratedCollective* find(CollectiveOp op, std::int64_t ranks = 0) const;
};

NetworkCalibration read_network_calibration(const std::filesystem::path& file);  // throws InputError
void write_network_calibration(const NetworkCalibration& cal, const std::filesystem::path& file);

}  // namespace ssgd::sim
