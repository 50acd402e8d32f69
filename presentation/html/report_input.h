#pragma once
// The inputs of `ssgd report`, recognised by their content and checked field
// by field: a simulate report (`ssgd simulate --report`, docs/report.md), a
// scale report (`ssgd scale --report`), an optimize report
// (`ssgd optimize --report`), a sweep's JSON lines (one object per line,
// `ssgd_sweep_version` on each), or a report of `ssgd dataset verify` or
// `ssgd diff` (measured_input.h). Anything else, and any field of the wrong
// type, is an ssgd::InputError naming the file, the line for JSON lines, and
// the field. Only the fields the HTML report shows are read. A timeline of
// `ssgd simulate --timeline` (Chrome trace-event JSON, gzip or not) is read by
// timeline_input.h.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "presentation/html/json_fields.h"
#include "presentation/html/measured_input.h"
#include "presentation/html/timeline_input.h"

namespace ssgd::html {

// The largest input read, and the most points a sweep may have.
inline constexpr std::uintmax_t kMaxInputBytes = 64u << 20;
inline constexpr std::size_t kMaxSweepPoints = 100'000;
// The sweep's JSON lines version this ssgd reads.
inline constexpr std::int64_t kSweepVersion = 1;

struct Breakdown {
  std::int64_t compute_ns = 0, exposed_comm_ns = 0, io_ns = 0, idle_ns = 0;
};

struct CollectiveRow {
  std::int64_t group = 0, bytes = 0, time_ns = 0;
  std::string algorithm;
  double algbw = 0, busbw = 0;
  bool replayed = false;
};

struct LinkRow {
  std::string link, kind;
  double capacity_bytes_per_s = 0, bytes = 0, utilisation = 0;
};

struct LinkKindRow {
  std::string kind;
  std::int64_t links = 0;
  double bytes = 0, mean_utilisation = 0, max_utilisation = 0;
};

struct CriticalPath {
  std::int64_t length_ns = 0, tasks = 0, gaps_ns = 0;
  // io, h2d, forward, backward, comm, update (the order an iteration runs
  // them), then any other kind in the report's order.
  std::vector<std::pair<std::string, std::int64_t>> time_by_kind_ns;
};

// A scenario with `jobs:` (docs/report.md, `shared_fabric`): each job's
// time alone on its nodes and with every job running.
struct SharedJob {
  std::string name, kind, measure, detail;
  std::int64_t first_node = 0, nodes = 0, workers = 0, count = 0;
  std::int64_t alone_ns = 0, shared_ns = 0;
  double slowdown = 0;
};

struct SharedFabric {
  std::optional<std::int64_t> platform_nodes;
  std::vector<SharedJob> jobs;
};

struct SimulateRun {
  std::string input_path, model;  // input.path, input.model
  std::int64_t workers = 0;
  std::int64_t iteration_time_ns = 0;
  std::vector<std::int64_t> iteration_times_ns;
  double throughput = 0;
  std::optional<double> speedup, efficiency;
  std::optional<std::int64_t> single_worker_ns;
  Breakdown breakdown;
  std::string comm_model, network_model, policy;
  std::optional<std::int64_t> iterations;  // scenario.iterations
  std::optional<std::int64_t> collectives_per_iteration, comm_per_iteration_ns;
  std::vector<CollectiveRow> collectives;  // communication.collectives_last_iteration
  std::vector<LinkRow> busiest_links;
  std::vector<LinkKindRow> link_kinds;
  std::optional<CriticalPath> critical_path;
  std::optional<SharedFabric> shared_fabric;
  Json scenario;  // the report's `scenario` object as written, or null
};

struct ScaleRow {
  std::int64_t gpus = 0, nodes = 0, gpus_per_node = 0, per_gpu_batch = 0, global_batch = 0;
  std::int64_t iteration_time_ns = 0;
  double throughput = 0, speedup = 0, efficiency = 0;
  std::optional<std::int64_t> exposed_comm_ns;
};

struct ScaleReport {
  std::string input_path, model, scenario_file, mode, policy;
  std::vector<std::string> scenario_sets;  // --set KEY=VALUE, as given (absent in older reports)
  std::optional<std::int64_t> iterations;
  ScaleRow single_gpu;
  std::vector<ScaleRow> rows;
  Json settings;  // the report without its rows, for the <details>
};

struct OptimizePoint {
  std::string value;
  std::int64_t iteration_time_ns = 0;
  double throughput = 0;
  std::optional<std::int64_t> collectives, exposed_comm_ns;
};

struct OptimizeReport {
  std::string param, input, scenario_file;
  std::vector<std::string> scenario_sets;  // --set KEY=VALUE, as given (absent in older reports)
  std::optional<std::int64_t> gpu_memory_bytes;
  std::vector<OptimizePoint> curve;
  std::size_t best = 0;  // index into curve: the first point with best.value
  std::optional<std::int64_t> as_given_ns;
};

struct SweepPoint {
  std::int64_t point = 0;
  Json keys;  // an object of scalars, the keys in the file's order
  std::int64_t iteration_time_ns = 0, workers = 0;
  double throughput = 0;
  std::optional<double> speedup, efficiency;
  Breakdown breakdown;
  std::optional<std::int64_t> comm_per_iteration_ns, critical_path_ns;
  // A point whose scenario or replay failed (docs/sweep.md): its message, and
  // no figures.
  std::optional<std::string> error;
};

struct SweepReport {
  std::vector<std::string> keys;  // the first line's keys, in its order
  std::vector<SweepPoint> points;
};

enum class InputKind { kSimulate, kScale, kOptimize, kSweep, kTimeline, kDatasetVerify, kDiff };
// "simulate report", "scale report", "optimize report", "sweep", "timeline",
// "dataset verify report", "diff report".
std::string_view to_string(InputKind kind);

struct ReportInput {
  std::string path;  // as given
  InputKind kind = InputKind::kSimulate;
  std::variant<SimulateRun, ScaleReport, OptimizeReport, SweepReport, TimelineView,
               DatasetVerifyReport, DiffReport>
      content;
};

// Reads `path` (a regular file of at most kMaxInputBytes, or a gzip file, by
// its magic bytes, of at most kMaxInputBytes uncompressed) and recognises it.
ReportInput read_report_input(const std::string& path);
// The same from `text`, read from `path`.
ReportInput parse_report_input(const std::string& path, std::string_view text);

}  // namespace ssgd::html
