#include "presentation/html/measured_input.h"

#include <fmt/format.h>

namespace ssgd::html {
namespace {

// ---------------------------------------------------------------- dataset verify

VerifySummary read_summary(const JsonFields& f, const Json& r, const std::string& at) {
  VerifySummary s;
  const Json& v = f.object(r, "", at);
  s.cases = f.count(v, at, "cases");
  s.median_abs_error_percent = f.opt_number(v, at, "median_abs_error_percent");
  s.worst_abs_error_percent = f.opt_number(v, at, "worst_abs_error_percent");
  s.worst_case = f.opt_text(v, at, "worst_case");
  return s;
}

// A time in ns, or bytes, that must be more than 0 (a ratio is made of it).
std::int64_t positive(const JsonFields& f, const Json& v, const std::string& at,
                      std::string_view key) {
  const std::int64_t n = f.count(v, at, key);
  if (n == 0) f.fail(JsonFields::join(at, key), "must be greater than zero, got 0");
  return n;
}

// The measured median, p10 and p90 of a case, in `unit` ("ns" or "bytes"):
// the median above 0, a p90 not below the p10.
void read_measured(const JsonFields& f, const Json& v, const std::string& at, std::string_view unit,
                   std::int64_t& median, std::optional<std::int64_t>& p10,
                   std::optional<std::int64_t>& p90) {
  const std::string p10_key = fmt::format("measured_p10_{}", unit);
  const std::string p90_key = fmt::format("measured_p90_{}", unit);
  median = positive(f, v, at, fmt::format("measured_median_{}", unit));
  p10 = f.opt_count(v, at, p10_key);
  p90 = f.opt_count(v, at, p90_key);
  if (p10 && p90 && *p90 < *p10) {
    f.fail(JsonFields::join(at, p90_key),
           fmt::format("less than {} ({} < {})", p10_key, *p90, *p10));
  }
}

VerifyMemory read_memory(const JsonFields& f, const Json& m, const std::string& at) {
  VerifyMemory v;
  v.predicted_bytes = f.count(m, at, "predicted_bytes");
  read_measured(f, m, at, "bytes", v.measured_bytes, v.p10_bytes, v.p90_bytes);
  v.error_percent = f.number(m, at, "error_percent");
  v.noise_percent = f.opt_number(m, at, "noise_percent");
  v.activations_known = f.opt_flag(m, at, "activations_known").value_or(true);
  return v;
}

// ---------------------------------------------------------------- diff

DiffSide read_side(const JsonFields& f, const Json& r, const std::string& at) {
  const Json& v = f.object(r, "", at);
  DiffSide s;
  s.path = f.opt_text(v, at, "path");
  s.chosen = f.opt_text(v, at, "chosen");
  s.iteration = f.count(v, at, "iteration");
  s.iteration_time_ns = f.count(v, at, "iteration_time_ns");
  return s;
}

std::optional<DiffTask> read_task(const JsonFields& f, const Json& row, const std::string& at,
                                  std::string_view side, bool wanted) {
  const std::string path = JsonFields::join(at, side);
  const Json* v = f.find(row, at, side);
  const bool present = v != nullptr && !v->is_null();
  if (present != wanted) {
    f.fail(path, wanted ? fmt::format("expected the {} task (an object), got {}", side,
                                      v == nullptr ? "nothing" : "null")
                        : fmt::format("expected null (the row is a task on one side only), got {}",
                                      JsonFields::describe(*v)));
  }
  if (!present) return std::nullopt;
  f.require_object(*v, path);
  DiffTask t;
  t.start_ns = f.integer(*v, path, "start_ns");
  t.end_ns = f.integer(*v, path, "end_ns");
  if (t.end_ns < t.start_ns) {
    f.fail(JsonFields::join(path, "end_ns"),
           fmt::format("ends before it starts ({} < start_ns {})", t.end_ns, t.start_ns));
  }
  t.busy_ns = f.count(*v, path, "busy_ns");
  t.bytes = f.opt_count(*v, path, "bytes").value_or(0);
  return t;
}

void read_rows(const JsonFields& f, const Json& r, std::string_view key, bool measured,
               bool simulated, std::vector<DiffRow>& out) {
  const Json& list = f.array(r, "", key);
  for (std::size_t i = 0; i < list.size(); ++i) {
    const Json& row = list[i];
    const std::string at = JsonFields::element(std::string(key), i);
    f.require_object(row, at);
    DiffRow d;
    d.rank = f.count(row, at, "rank");
    d.kind = f.text(row, at, "kind");
    d.task = f.text(row, at, "task");
    d.measured = read_task(f, row, at, "measured", measured);
    d.simulated = read_task(f, row, at, "simulated", simulated);
    out.push_back(std::move(d));
  }
}

}  // namespace

DatasetVerifyReport read_dataset_verify(const JsonFields& f, const Json& r) {
  const Json* version = f.find(r, "", "format_version");
  if (version == nullptr) f.fail("format_version", "missing");
  if (f.as_count(*version, "format_version") != kDatasetVerifyVersion) {
    f.fail("format_version",
           fmt::format("version {}; this ssgd reads dataset verify reports of version {}",
                       version->dump(), kDatasetVerifyVersion));
  }
  DatasetVerifyReport d;
  if (const Json* ds = f.opt_object(r, "", "dataset")) {
    d.folder = f.opt_text(*ds, "dataset", "folder");
    d.name = f.opt_text(*ds, "dataset", "name");
    d.packed_by = f.opt_text(*ds, "dataset", "packed_by_ssgd_version");
    d.entries = f.opt_count(*ds, "dataset", "entries");
    d.files = f.opt_count(*ds, "dataset", "files");
  }
  const Json& cases = f.array(r, "", "cases");
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Json& c = cases[i];
    const std::string at = JsonFields::element("cases", i);
    f.require_object(c, at);
    VerifyCase v;
    v.name = f.text(c, at, "case");
    v.kind = f.text(c, at, "kind");
    v.predicted_ns = f.count(c, at, "predicted_ns");
    read_measured(f, c, at, "ns", v.measured_ns, v.p10_ns, v.p90_ns);
    v.error_percent = f.number(c, at, "error_percent");
    v.noise_percent = f.opt_number(c, at, "noise_percent");
    if (const Json* m = f.opt_object(c, at, "memory")) {
      v.memory = read_memory(f, *m, JsonFields::join(at, "memory"));
    }
    d.cases.push_back(std::move(v));
  }
  d.replay = read_summary(f, r, "summary.replay");
  d.what_if = read_summary(f, r, "summary.what_if");
  d.all = read_summary(f, r, "summary.all");
  if (f.opt_object(r, "", "summary.memory") != nullptr) {
    d.memory = read_summary(f, r, "summary.memory");
  }
  d.median_noise_percent = f.opt_number(r, "", "summary.median_noise_percent");
  if (d.all.cases != static_cast<std::int64_t>(d.cases.size())) {
    f.fail("summary.all.cases",
           fmt::format("{} cases, but cases[] holds {}", d.all.cases, d.cases.size()));
  }
  return d;
}

DiffReport read_diff(const JsonFields& f, const Json& r) {
  DiffReport d;
  d.measured = read_side(f, r, "measured");
  d.simulated = read_side(f, r, "simulated");
  d.by = f.opt_text(r, "", "by");
  if (d.by.empty()) d.by = "duration";
  if (d.by != "start" && d.by != "end" && d.by != "duration") {
    f.fail("by", fmt::format("expected start, end or duration, got {}",
                             JsonFields::describe(Json(d.by))));
  }
  read_rows(f, r, "matched", true, true, d.matched);
  read_rows(f, r, "measured_only", true, false, d.measured_only);
  read_rows(f, r, "simulated_only", false, true, d.simulated_only);
  return d;
}

}  // namespace ssgd::html
