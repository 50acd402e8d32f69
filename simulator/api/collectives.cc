#include "simulator/api/collectives.h"

#include <cmath>

#include <fmt/format.h>

#include "common/error.h"
#include "common/units.h"
#include "simulator/api/request_error.h"
#include "simulator/scenario/scenario_network.h"

namespace ssgd::sim {
namespace {

std::int64_t size_flag(const std::string& flag, const std::string& text) {
  std::int64_t bytes = 0;
  try {
    bytes = parse_bytes(text);
  } catch (const std::invalid_argument& e) {
    throw request_error(flag, text, e.what());
  }
  if (bytes < 1) throw request_error(flag, text, "must be at least 1 byte");
  return bytes;
}

}  // namespace

CollectivesFlags check_collectives_request(const CollectivesRequest& r) {
  CollectivesFlags f;
  const auto op = parse_collective_op(r.op);
  if (!op) {
    throw request_error("--op", r.op, fmt::format("unknown collective; known: {}", collective_op_names()));
  }
  f.op = *op;
  const std::int64_t from = size_flag("--from", r.from);
  const std::int64_t to = size_flag("--to", r.to);
  if (to < from) {
    throw request_error("--to", r.to, fmt::format("below --from ({})", format_bytes(from)));
  }
  double factor = 0;
  try {
    std::size_t used = 0;
    factor = std::stod(r.factor, &used);
    if (used != r.factor.size()) factor = 0;
  } catch (const std::exception&) {
    factor = 0;
  }
  if (!(factor > 1) || !std::isfinite(factor)) {
    throw request_error("--factor", r.factor, "must be a number above 1");
  }
  for (double b = static_cast<double>(from); b <= static_cast<double>(to) * (1 + 1e-12); b *= factor) {
    const auto bytes = static_cast<std::int64_t>(std::llround(b));
    if (!f.sizes.empty() && bytes == f.sizes.back()) continue;
    f.sizes.push_back(bytes);
    if (f.sizes.size() > 1000) {
      throw request_error("--factor", r.factor,
                          "more than 1000 sizes from --from to --to; use a larger factor");
    }
  }
  return f;
}

CollectivesResult run_collectives(const Scenario& scenario, const CollectivesFlags& flags) {
  return with_located_errors(scenario, [&] {
    CollectivesResult out;
    const CommModel comm = scenario_comm_model(scenario);
    out.op = to_string(flags.op);
    out.network = comm.describe();
    out.model = scenario.network_model;
    out.ranks = comm.workers();
    out.nodes = comm.shape().nodes();
    out.gpus_per_node = comm.shape().ranks_per_node;
    if (out.ranks < 2) {
      throw ParameterError("cluster.nodes", "a collective needs at least 2 GPUs; the scenario has 1");
    }
    std::vector<double> sizes(flags.sizes.begin(), flags.sizes.end());
    comm.prepare_isolated(flags.op, sizes, CommModel::isolated_threads());
    const double factor = bus_bandwidth_factor(flags.op, out.ranks);
    for (const std::int64_t bytes : flags.sizes) {
      CollectiveRow row;
      const auto b = static_cast<double>(bytes);
      row.bytes = bytes;
      auto run = comm.run_description(flags.op, b);
      row.algorithm = std::move(run.algorithm);
      row.protocol = std::move(run.protocol);
      row.channels = run.channels;
      row.time = comm.isolated_time(flags.op, b);
      if (row.time > Duration::zero()) {
        row.algbw_bytes_per_s = b / (static_cast<double>(row.time.ns()) * 1e-9);
        row.busbw_bytes_per_s = row.algbw_bytes_per_s * factor;
      }
      out.rows.push_back(std::move(row));
    }
    return out;
  });
}

std::string collectives_table(const CollectivesResult& r) {
  std::string s = fmt::format("# ssgd collectives: {} over {} ranks ({} node(s) x {} GPU(s)), {} network model\n",
                              r.op, r.ranks, r.nodes, r.gpus_per_node, r.model);
  s += fmt::format("# {}\n#\n", r.network);
  s += fmt::format("# {:>12} {:>12} {:<18} {:<8} {:>8} {:>12} {:>8} {:>8}\n", "size", "count",
                   "algorithm", "protocol", "channels", "time", "algbw", "busbw");
  s += fmt::format("# {:>12} {:>12} {:<18} {:<8} {:>8} {:>12} {:>8} {:>8}\n", "(B)", "(elements)", "",
                   "", "", "(us)", "(GB/s)", "(GB/s)");
  for (const CollectiveRow& row : r.rows) {
    s += fmt::format("  {:>12} {:>12} {:<18} {:<8} {:>8} {:>12.2f} {:>8.2f} {:>8.2f}\n", row.bytes,
                     row.bytes / 4, row.algorithm, row.protocol.empty() ? "-" : row.protocol,
                     row.channels > 0 ? std::to_string(row.channels) : "-",
                     static_cast<double>(row.time.ns()) * 1e-3, row.algbw_bytes_per_s * 1e-9,
                     row.busbw_bytes_per_s * 1e-9);
  }
  return s;
}

nlohmann::json collectives_json(const CollectivesResult& r) {
  nlohmann::json rows = nlohmann::json::array();
  for (const CollectiveRow& row : r.rows) {
    rows.push_back({{"bytes", row.bytes},
                    {"algorithm", row.algorithm},
                    {"protocol", row.protocol},
                    {"channels", row.channels},
                    {"time_ns", row.time.ns()},
                    {"algbw_bytes_per_s", row.algbw_bytes_per_s},
                    {"busbw_bytes_per_s", row.busbw_bytes_per_s}});
  }
  return {{"ssgd_collectives_version", 1},
          {"op", r.op},
          {"network", r.network},
          {"network_model", r.model},
          {"ranks", r.ranks},
          {"nodes", r.nodes},
          {"gpus_per_node", r.gpus_per_node},
          {"rows", rows}};
}

}  // namespace ssgd::sim
