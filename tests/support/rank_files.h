#pragma once
// Synthetic per-rank trace files, as the tracer would write them into one
// capture folder (DIR/rank-<r>.ssgdt), for the merge tests.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "traces/proto/capture_metadata.pb.h"
#include "traces/proto/trace_events.pb.h"
#include "traces/trace_writer.h"

namespace ssgd::testing {

struct RankFileSpec {
  int rank = 0;
  int world_size = 2;
  std::string hostname = "a";
  trace::v1::ClockDomain::Kind kind = trace::v1::ClockDomain::MONOTONIC_RAW;
  std::optional<trace::v1::ClockCalibration> calibration;
  std::vector<trace::v1::Event> events;
  // The footer's calibration (start and end, as the tracer writes at exit).
  std::optional<trace::v1::ClockCalibration> footer_calibration = std::nullopt;
};

inline trace::v1::Event kernel_event(int rank, std::int64_t start_ns, std::int64_t end_ns,
                                     const std::string& name = "k") {
  trace::v1::Event e;
  e.set_rank(rank);
  auto* k = e.mutable_kernel();
  k->set_name(name);
  k->set_start_ns(start_ns);
  k->set_end_ns(end_ns);
  return e;
}

inline trace::v1::ClockCalibration calibration(const std::string& reference,
                                               std::int64_t offset_ns, std::int64_t uncertainty_ns,
                                               std::int64_t at_ns) {
  trace::v1::ClockCalibration c;
  c.set_reference_hostname(reference);
  c.mutable_start()->set_offset_ns(offset_ns);
  c.mutable_start()->set_uncertainty_ns(uncertainty_ns);
  c.mutable_start()->set_measured_at_ns(at_ns);
  return c;
}

inline std::filesystem::path write_rank_file(const std::filesystem::path& dir,
                                             const RankFileSpec& spec) {
  trace::v1::CaptureMetadata m;
  m.set_tool("rank_files test helper");
  m.set_provenance("synthetic");
  m.set_rank(spec.rank);
  m.set_world_size(spec.world_size);
  auto* host = m.add_hosts();
  host->set_hostname(spec.hostname);
  host->mutable_clock()->set_kind(spec.kind);
  if (spec.calibration) *host->mutable_clock()->mutable_calibration() = *spec.calibration;
  const auto path = dir / ("rank-" + std::to_string(spec.rank) + ".ssgdt");
  trace::TraceWriterOptions options;
  options.events_per_chunk = 2;  // several chunks, so a cut file keeps a readable prefix
  trace::TraceWriter writer(path, m, options);
  for (const auto& e : spec.events) writer.append(e);
  if (spec.footer_calibration) writer.set_clock_calibration(*spec.footer_calibration);
  writer.close();
  return path;
}

}  // namespace ssgd::testing
