#include "fuzz/measurement_check.h"

#include <cmath>
#include <string>
#include <vector>

#include "fuzz/fuzz_support.h"
#include "traces/import/measurement_files.h"

namespace ssgd::fuzz {
namespace {

void check(const std::string& what, const std::string& file,
           const std::vector<trace::Measurement>& measurements) {
  if (measurements.empty()) finding(what + ": an empty list of measurements");
  for (const trace::Measurement& m : measurements) {
    const std::string at = what + ": the measurement of line " + std::to_string(m.line) + " has ";
    if (m.ranks < 2) finding(at + std::to_string(m.ranks) + " ranks");
    if (!(m.bytes > 0) || !std::isfinite(m.bytes)) finding(at + std::to_string(m.bytes) + " bytes");
    if (m.time.ns() <= 0) finding(at + "a time of " + std::to_string(m.time.ns()) + " ns");
    if (m.source != file) finding(at + "the source '" + m.source + "'");
    if (m.line < 0) finding(at + "a negative line");
  }
}

}  // namespace

void fuzz_measurements(trace::MeasurementFormat format, std::string_view name,
                       const std::uint8_t* data, std::size_t size) {
  clear_scratch();
  const std::string file = write_scratch(name, data, size).string();

  trace::MeasurementOptions plain;
  plain.format = format;
  trace::MeasurementOptions given = plain;
  given.ranks = 4;
  given.op = CollectiveOp::kAllReduce;
  given.in_place = true;
  trace::MeasurementOptions automatic;

  struct Read {
    std::string what;
    trace::MeasurementOptions options;
  };
  for (const Read& read : {Read{"read_measurements", plain},
                           Read{"read_measurements --ranks 4 --op all_reduce --in-place", given},
                           Read{"read_measurements --format auto", automatic}}) {
    std::vector<trace::Measurement> measurements;
    if (accepts(read.what, {file},
                [&] { measurements = trace::read_measurements(file, read.options); })) {
      check(read.what, file, measurements);
    }
  }
}

}  // namespace ssgd::fuzz
