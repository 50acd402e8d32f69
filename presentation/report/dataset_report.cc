#include "presentation/report/dataset_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ostream>

#include "common/units.h"
#include "common/version.h"

namespace ssgd::report {
namespace {

using Json = nlohmann::ordered_json;

std::optional<double> median_of(std::vector<double> values) {
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// |error| over `cases`: the time's, or with `memory` the memory estimate's.
DatasetErrorSummary summarise(const std::vector<const sim::DatasetCase*>& cases,
                              bool memory = false) {
  DatasetErrorSummary s;
  s.cases = cases.size();
  std::vector<double> errors;
  for (const sim::DatasetCase* c : cases) {
    const double e = std::abs(memory ? c->memory_error_percent : c->error_percent);
    errors.push_back(e);
    if (!s.worst_abs_error_percent || e > *s.worst_abs_error_percent) {
      s.worst_abs_error_percent = e;
      s.worst_case = c->name();
    }
  }
  s.median_abs_error_percent = median_of(std::move(errors));
  return s;
}

std::string percent(std::optional<double> p) {
  return p ? fmt::format("{:.1f}%", *p) : std::string("-");
}

Json summary_json(const DatasetErrorSummary& s) {
  Json j{{"cases", s.cases}};
  if (s.median_abs_error_percent) {
    j["median_abs_error_percent"] = *s.median_abs_error_percent;
    j["worst_abs_error_percent"] = *s.worst_abs_error_percent;
    j["worst_case"] = s.worst_case;
  }
  return j;
}

void print_memory_table(const std::vector<sim::DatasetCase>& cases, std::size_t width,
                        std::ostream& out) {
  out << fmt::format("  {:<{}}  {:<7}  {:>12}  {:>12}  {:>8}  {:>7}  {}\n", "case", width, "kind",
                     "memory", "measured", "error", "spread", "activations");
  bool unknown = false;
  for (const sim::DatasetCase& c : cases) {
    if (!c.measured_memory) continue;
    const trace::MeasuredBytes& m = *c.measured_memory;
    unknown = unknown || !c.memory_activations_known;
    out << fmt::format("  {:<{}}  {:<7}  {:>12}  {:>12}  {:>+7.2f}%  {:>7}  {}\n", c.name(), width,
                       to_string(c.kind), format_bytes(c.predicted_memory_bytes),
                       format_bytes(m.median), c.memory_error_percent,
                       percent(measured_noise_percent(m)),
                       c.memory_activations_known ? "estimated" : "not in the trace");
  }
  out << "\n  memory: the replay's per-GPU estimate (ssgd simulate's); measured: the median over\n"
         "  ranks and rounds of a rank's peak above what it held before the model was built;\n"
         "  spread: (p90 - p10) / median of the measurement\n";
  if (unknown) {
    out << "  activations not in the trace: the estimate leaves them out, so it is low by them\n";
  }
  out << "\n";
}

}  // namespace

double measured_noise_percent(const trace::MeasuredTime& m) {
  return static_cast<double>((m.p90 - m.p10).ns()) / static_cast<double>(m.median.ns()) * 100.0;
}

double measured_noise_percent(const trace::MeasuredBytes& m) {
  return static_cast<double>(m.p90 - m.p10) / static_cast<double>(m.median) * 100.0;
}

std::optional<double> round_spread_percent(const trace::MeasuredTime& m) {
  if (!m.round_medians || m.round_medians->empty()) return std::nullopt;
  const auto [lo, hi] = std::minmax_element(m.round_medians->begin(), m.round_medians->end());
  return static_cast<double>((*hi - *lo).ns()) / static_cast<double>(m.median.ns()) * 100.0;
}

DatasetSummary summarise_dataset(const std::vector<sim::DatasetCase>& cases,
                                 const trace::DatasetManifest& manifest) {
  std::vector<const sim::DatasetCase*> all, replays, what_ifs, memory;
  for (const sim::DatasetCase& c : cases) {
    all.push_back(&c);
    (c.kind == sim::DatasetCaseKind::kReplay ? replays : what_ifs).push_back(&c);
    if (c.measured_memory) memory.push_back(&c);
  }
  DatasetSummary s{summarise(replays), summarise(what_ifs), summarise(all),
                   summarise(memory, /*memory=*/true), std::nullopt};
  std::vector<double> noise;
  for (const auto& e : manifest.entries) noise.push_back(measured_noise_percent(e.iteration));
  s.median_noise_percent = median_of(std::move(noise));
  return s;
}

void print_dataset_table(const std::vector<sim::DatasetCase>& cases, const DatasetSummary& summary,
                         std::ostream& out) {
  std::size_t width = 4;
  for (const sim::DatasetCase& c : cases) width = std::max(width, c.name().size());
  out << fmt::format("  {:<{}}  {:<7}  {:>12}  {:>12}  {:>8}  {:>7}  {:>7}\n", "case", width,
                     "kind", "predicted", "measured", "error", "noise", "rounds");
  for (const sim::DatasetCase& c : cases) {
    out << fmt::format("  {:<{}}  {:<7}  {:>12}  {:>12}  {:>+7.2f}%  {:>7}  {:>7}\n", c.name(),
                       width, to_string(c.kind), format_duration(c.predicted),
                       format_duration(c.measured.median), c.error_percent,
                       percent(measured_noise_percent(c.measured)),
                       percent(round_spread_percent(c.measured)));
  }
  out << "\n  measured: the median iteration time; error: (predicted - measured) / measured;\n"
         "  noise: (p90 - p10) / median of the measurement; rounds: (max - min) / median of\n"
         "  the rounds' medians\n\n";
  if (summary.memory.cases > 0) print_memory_table(cases, width, out);
  const auto line = [&](const char* label, const DatasetErrorSummary& s) {
    if (s.cases == 0) {
      out << fmt::format("  {:<8} no cases\n", label);
      return;
    }
    out << fmt::format("  {:<8} {} case(s), median |error| {}, worst |error| {} ({})\n", label,
                       s.cases, percent(s.median_abs_error_percent),
                       percent(s.worst_abs_error_percent), s.worst_case);
  };
  line("replay:", summary.replay);
  line("what-if:", summary.what_if);
  line("all:", summary.all);
  if (summary.memory.cases > 0) line("memory:", summary.memory);
  out << fmt::format("  noise:   median (p90 - p10) / median over the entries {}\n",
                     percent(summary.median_noise_percent));
}

Json dataset_report_json(const std::string& dir, const trace::DatasetManifest& manifest,
                         const std::vector<sim::DatasetCase>& cases,
                         const DatasetSummary& summary) {
  Json j = Json::object();
  j["format"] = "ssgd.dataset.verify";
  j["format_version"] = 1;
  j["ssgd_version"] = std::string(ssgd_version());
  j["dataset"] = Json{{"folder", dir},
                      {"name", manifest.name},
                      {"packed_by_ssgd_version", manifest.ssgd_version},
                      {"entries", manifest.entries.size()},
                      {"files", manifest.files.size()}};
  Json list = Json::array();
  for (const sim::DatasetCase& c : cases) {
    Json k = Json::object();
    k["case"] = c.name();
    k["kind"] = to_string(c.kind);
    k["entry"] = c.entry;
    k["from"] = c.from;
    k["trace"] = c.trace;
    k["scenario"] = c.scenario;
    k["predicted_ns"] = c.predicted.ns();
    k["measured_median_ns"] = c.measured.median.ns();
    k["measured_min_ns"] = c.measured.min.ns();
    k["measured_p10_ns"] = c.measured.p10.ns();
    k["measured_p90_ns"] = c.measured.p90.ns();
    k["error_percent"] = c.error_percent;
    k["noise_percent"] = measured_noise_percent(c.measured);
    if (const auto spread = round_spread_percent(c.measured)) k["round_spread_percent"] = *spread;
    if (const auto& m = c.measured_memory) {
      k["memory"] = Json{{"predicted_bytes", c.predicted_memory_bytes},
                         {"measured_median_bytes", m->median},
                         {"measured_min_bytes", m->min},
                         {"measured_p10_bytes", m->p10},
                         {"measured_p90_bytes", m->p90},
                         {"error_percent", c.memory_error_percent},
                         {"noise_percent", measured_noise_percent(*m)},
                         {"activations_known", c.memory_activations_known}};
    }
    list.push_back(std::move(k));
  }
  j["cases"] = std::move(list);
  Json s = Json::object();
  s["replay"] = summary_json(summary.replay);
  s["what_if"] = summary_json(summary.what_if);
  s["all"] = summary_json(summary.all);
  if (summary.memory.cases > 0) s["memory"] = summary_json(summary.memory);
  if (summary.median_noise_percent) s["median_noise_percent"] = *summary.median_noise_percent;
  j["summary"] = std::move(s);
  return j;
}

}  // namespace ssgd::report
