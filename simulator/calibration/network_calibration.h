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
  double max_bytes = 0;              // sizes up to this many bytes; +inf for the last band
  Duration latency;                  // alpha: the cost of one step of the algorithm
  double bandwidth_bytes_per_s = 0;  // 1/beta, > 0
  std::int64_t points = 0;           // provenance: points fitted in the band
  double median_error = 0;           // and their relative errors, as fractions
  double max_error = 0;
};

// One fit: T = a(P) latency + b(P) M / bandwidth in the band of M, with a and
// b the algorithm's alpha_beta_terms (predict() in band_fit.h).
struct CalibratedCollective {
  CollectiveOp op = CollectiveOp::kAllReduce;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::kRing;  // never kAuto
  std::vector<std::int64_t> ranks;   // the rank counts fitted, increasing; one: a per-count fit
  std::vector<std::string> sources;  // the measurement files, names only
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

// The algorithms a calibration may name, for messages: every one but auto
// ("ring, double_binary_tree, ..."); a fit needs one algorithm's terms.
std::string calibration_algorithm_names();

// Throws ssgd::InputError naming the file, the line and the key path.
NetworkCalibration read_network_calibration(const std::filesystem::path& file);
void write_network_calibration(const NetworkCalibration& cal, const std::filesystem::path& file);

}  // namespace ssgd::sim
