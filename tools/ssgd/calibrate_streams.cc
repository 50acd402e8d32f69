// ssgd calibrate --tcp-streams: the TCP stream model fitted to one
// collective's curve (simulator/calibration/stream_fit.h), printed and
// written as scenario keys (-o).
#include <charconv>
#include <cmath>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/atomic_file.h"
#include "common/units.h"
#include "simulator/calibration/stream_fit.h"
#include "simulator/platform/link_preset.h"
#include "tools/ssgd/calibrate_fits.h"
#include "tools/ssgd/commands.h"

namespace ssgd::tools {
namespace {

void print_stream_fit(const sim::StreamFitResult& f, std::ostream& out) {
  out << fmt::format("\n{} over {} ranks: {} steps, TCP stream model\n", to_string(f.op),
                     join_ranks(f.ranks), to_string(f.algorithm));
  out << fmt::format("  {:>8} {:>14} {:>12} {:>7} {:>7} {:>7}\n", "streams", "stream rate",
                     "latency", "points", "median", "max");
  out << fmt::format("  {:>8} {:>14} {:>12} {:>7} {:>7} {:>7}\n", f.streams,
                     format_rate(f.stream_rate_bytes_per_s), format_duration(f.latency), f.points,
                     percent(f.median_error), percent(f.max_error));
  if (f.by_streams.size() > 1) {
    out << "  rms relative error by stream count:";
    for (const auto& [s, rms] : f.by_streams) {
      if (s <= 8 || s == f.streams || s % 16 == 0) out << fmt::format(" {}: {}", s, percent(rms));
    }
    out << "\n";
  }
  if (!f.streams_identified) {
    out << fmt::format(
        "  note: other stream counts fit as well (within 1%): the smallest is shown, and only "
        "streams x stream rate = {} is well measured; small messages (steps under streams x 64 "
        "KiB) tell the count\n",
        format_rate(static_cast<double>(f.streams) * f.stream_rate_bytes_per_s));
  }
  if (f.rate_at_grid_edge) {
    out << "  note: the stream rate is at the edge of the search (1 MB/s to 1 TB/s): the curve "
           "may not be bound by TCP streams at all\n";
  }
  for (const sim::HoldoutError& h : f.holdout) {
    out << fmt::format("  held back, {} ranks: {} sizes predicted, median error {}, max {}\n",
                       h.ranks, h.points, percent(h.median_error), percent(h.max_error));
  }
}

// The scenario keys the stream fit gives, as a YAML file to copy from or to
// pass to --scenario, written whole or not at all (AtomicFile).
void write_stream_scenario(const sim::StreamFitResult& f, const std::vector<std::string>& inputs,
                           double line_rate, const std::filesystem::path& path) {
  AtomicFile file(path);
  std::ostream& out = file.stream();
  out << "# ssgd calibrate --tcp-streams: the TCP stream model (docs/platforms.md, TCP streams)\n";
  out << fmt::format("# fitted to {} {} measurement(s) over {} ranks ({} steps) from:\n", f.points,
                     to_string(f.op), join_ranks(f.ranks), to_string(f.algorithm));
  for (const auto& i : inputs) out << "#   " << comment_safe(i) << "\n";
  out << fmt::format("# median error {}, max {}\n", percent(f.median_error), percent(f.max_error));
  if (line_rate > 0) {
    out << fmt::format(
        "# with the streams bounded by a line rate of {}: a replay gets the same bound from the "
        "NIC's bandwidth (platform.nic.bandwidth)\n",
        format_rate(line_rate));
  }
  out << "platform:\n  nic:\n";
  out << fmt::format("    tcp_streams: {}\n", f.streams);
  out << fmt::format("    tcp_stream_rate: {}B/s\n",
                     static_cast<std::int64_t>(std::llround(f.stream_rate_bytes_per_s)));
  out << fmt::format("    latency: {}ns\n", f.latency.ns());
  file.commit();
}

}  // namespace

// --tcp-streams: "auto" (search 1 to 64) or a count from 1 to 64.
std::optional<std::int64_t> parse_tcp_streams(const std::string& text) {
  if (text == "auto") return std::nullopt;
  std::int64_t n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size() || n < 1 || n > 64) {
    throw flag_error("--tcp-streams", text, "expected 'auto' or a stream count from 1 to 64");
  }
  return n;
}

// --line-rate: a rate (10Gbit/s, 1.25GB/s) or a link preset (25gbe), whose
// sustained bandwidth bounds the fit as it bounds a simulation.
double parse_line_rate(const std::string& text) {
  if (const sim::LinkPreset* preset = sim::find_link_preset(text)) {
    return preset->bandwidth_bytes_per_s;
  }
  double rate = 0;
  try {
    rate = parse_rate_bytes_per_s(text);
  } catch (const std::invalid_argument& e) {
    throw flag_error("--line-rate", text,
                     fmt::format("{}; or a link preset ({})", e.what(), sim::link_preset_names()));
  }
  if (!(rate > 0) || !std::isfinite(rate)) {
    throw flag_error("--line-rate", text, "must be above 0");
  }
  return rate;
}

void run_stream_fit(const CalibrateArgs& a,
                    const std::map<sim::CollectiveOp, std::vector<trace::Measurement>>& by_op,
                    const std::vector<std::vector<trace::Measurement>>& groups, std::size_t total) {
  if (by_op.size() > 1) {
    throw flag_error("--tcp-streams", a.tcp_streams,
                     fmt::format("fits one collective, and the inputs measure {}; fit each on its "
                                 "own",
                                 fmt::join(
                                     [&] {
                                       std::vector<std::string> names;
                                       for (const auto& [op, _] : by_op)
                                         names.push_back(to_string(op));
                                       return names;
                                     }(),
                                     " and ")));
  }
  sim::StreamFitOptions so;
  so.algorithm = sim::parse_collective_algorithm(a.algorithm).value();
  so.streams = parse_tcp_streams(a.tcp_streams);
  so.holdout = a.holdout;
  if (!a.line_rate.empty()) so.line_rate_bytes_per_s = parse_line_rate(a.line_rate);
  const auto fits =
      fit_groups(groups, [&](const auto& points) { return sim::fit_streams(points, so); });
  print_read(total, a.inputs.size());
  for (const auto& f : fits) print_stream_fit(f, std::cout);
  const sim::StreamFitResult& joint = fits.front();
  std::cout << fmt::format(
      "\nscenario keys: --set platform.nic.tcp_streams={} --set platform.nic.tcp_stream_rate={}B/s "
      "--set platform.nic.latency={}ns\n",
      joint.streams, static_cast<std::int64_t>(std::llround(joint.stream_rate_bytes_per_s)),
      joint.latency.ns());
  if (a.output.given()) {
    write_output(a.output, [&] {
      write_stream_scenario(joint, a.inputs, so.line_rate_bytes_per_s, a.output.path);
    });
    std::cout << fmt::format("wrote {} (the joint fit's keys, as a scenario)\n", a.output.path);
  }
  std::cout.flush();
}

}  // namespace ssgd::tools
