#pragma once
// The fits of `ssgd calibrate` (tools/ssgd/cmd_calibrate.cc): its arguments,
// what the fits share, and each fit other than the network bands, in a file
// of its own: the TCP stream model (calibrate_streams.cc), a scheduler's
// costs (calibrate_scheduler.cc), the platform's NIC (calibrate_nic.cc) and
// the interference factors (calibrate_interference.h).

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/collective_op.h"
#include "common/error.h"
#include "tools/ssgd/cli_options.h"
#include "traces/measurement.h"

namespace ssgd::tools {

struct CalibrateArgs {
  std::vector<std::string> inputs;
  OutputFile output;
  std::string format = "auto";
  std::string op;
  std::string algorithm = "ring";
  std::int64_t ranks = 0;
  std::string bands;
  std::int64_t max_bands = 4;
  std::int64_t holdout = 0;
  std::string level = "inter_node";
  bool per_ranks = false;
  bool in_place = false;
  bool allow_truncated = false;
  bool max_bands_given = false;
  std::string tcp_streams;           // "auto" or a count: fit the TCP stream model instead of bands
  std::string line_rate;             // with --tcp-streams: a rate or a link preset
  bool scheduler = false;            // fit the scheduler's costs from traces instead
  bool interference = false;         // fit the interference factors from traces instead
  std::string alone_calibration;     // with --interference: collectives' alone times
  bool nic = false;                  // fit the scenario platform's NIC through its model instead
  std::vector<std::string> predict;  // with --nic: curves predicted, not fitted
  ScenarioOptions scenario;          // with --nic: the platform
};

// "12.3%".
std::string percent(double fraction);
// "8.0 KiB".
std::string size_label(double bytes);
// "2, 4, 8".
std::string join_ranks(const std::vector<std::int64_t>& ranks);
// "ssgd calibrate: N measurements from M file(s)".
void print_read(std::size_t measurements, std::size_t files);

// The flag of the first pair that is given, refused with `why`.
void refuse_given_flags(std::initializer_list<std::pair<bool, const char*>> flags,
                        std::string_view why);

// The flags that shape a network fit, refused with `mode` (--scheduler,
// --interference), whose fit reads ssgd traces.
void refuse_network_flags(const CalibrateArgs& a, const char* mode);

// One fit per group of measurements, all made before anything is printed or
// written; a group the fit refuses is an input error naming its first file
// and the collective.
template <typename Fit>
auto fit_groups(const std::vector<std::vector<trace::Measurement>>& groups, Fit&& fit) {
  std::vector<decltype(fit(groups.front()))> fits;
  for (const auto& points : groups) {
    try {
      fits.push_back(fit(points));
    } catch (const std::invalid_argument& e) {
      throw InputError(InputLocation{points.front().source, std::nullopt, std::nullopt,
                                     to_string(points.front().op)},
                       e.what());
    }
  }
  return fits;
}

// --tcp-streams and --line-rate, checked (they throw the flag's error).
std::optional<std::int64_t> parse_tcp_streams(const std::string& text);
double parse_line_rate(const std::string& text);

// --tcp-streams: the TCP stream model fitted to one collective's `groups`
// (read from the inputs, `total` measurements; `by_op`: by collective).
void run_stream_fit(const CalibrateArgs& a,
                    const std::map<CollectiveOp, std::vector<trace::Measurement>>& by_op,
                    const std::vector<std::vector<trace::Measurement>>& groups, std::size_t total);

// --scheduler: the costs of a partitioning scheduler, from traces where every
// partition is a collective of its own (simulator/calibration/scheduler_fit.h).
// One trace (one rank's, or a run's ranks merged); several are refused rather
// than silently reduced to one.
void run_scheduler_fit(const CalibrateArgs& a);

// --nic: the scenario platform's NIC (bandwidth and latency) fitted to the
// inputs through the scenario's model; --predict's files are predicted.
void run_nic_fit(const CalibrateArgs& a, const trace::MeasurementOptions& mo);

}  // namespace ssgd::tools
