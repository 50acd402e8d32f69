#include "traces/import/chakra/chakra_import.h"

#include <optional>
#include <ostream>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "common/error.h"
#include "common/version.h"
#include "common/work_context.h"
#include "traces/chakra/et_file.h"
#include "traces/graph_node_check.h"
#include "traces/import/chakra/chakra_files.h"
#include "traces/trace_writer.h"

namespace ssgd::trace {
namespace {

// A rank's nodes with their records, checked as one graph.
struct RankGraph {
  std::vector<v1::GraphNode> nodes;
};

[[noreturn]] void fail_node(const std::string& file, std::size_t index, const std::string& field,
                            const std::string& what) {
  throw InputError({file, std::nullopt, static_cast<std::int64_t>(index) + 1, field}, what);
}

// Unique ids, dependencies inside the rank, no cycle (traces/graph_node_check.h).
void check_graph(const std::string& file, const RankGraph& g) {
  std::vector<GraphNodeDeps> nodes;
  nodes.reserve(g.nodes.size());
  for (const auto& n : g.nodes) {
    nodes.push_back({n.id(),
                     n.name(),
                     {n.data_deps().data(), static_cast<std::size_t>(n.data_deps().size())},
                     {n.ctrl_deps().data(), static_cast<std::size_t>(n.ctrl_deps().size())}});
  }
  if (auto problem =
          check_rank_graph(nodes, [](std::size_t i) { return fmt::format("record {}", i + 1); })) {
    fail_node(file, problem->node, problem->field, problem->what);
  }
}

// The shape rank 0's metadata records (ssgd_nodes, ssgd_gpus_per_node), or
// {0, 0}. Both or neither; each a positive integer; their product the
// number of rank files.
std::pair<std::int64_t, std::int64_t> recorded_shape(const chakra::GlobalMetadata& m,
                                                     const std::string& file, std::size_t ranks) {
  const chakra::Attribute* nodes = nullptr;
  const chakra::Attribute* gpus = nullptr;
  for (const auto& a : m.attrs) {
    if (a.name == "ssgd_nodes") nodes = &a;
    if (a.name == "ssgd_gpus_per_node") gpus = &a;
  }
  if (nodes == nullptr && gpus == nullptr) return {0, 0};
  const auto fail = [&](const char* name, const std::string& what) {
    throw InputError({file, std::nullopt, std::nullopt, fmt::format("GlobalMetadata attr {}", name)},
                     what);
  };
  if (nodes == nullptr) fail("ssgd_nodes", "is missing; ssgd_gpus_per_node is given, and both say the ranks' shape");
  if (gpus == nullptr) fail("ssgd_gpus_per_node", "is missing; ssgd_nodes is given, and both say the ranks' shape");
  const auto n = nodes->as_int64();
  const auto g = gpus->as_int64();
  if (!n || *n < 1) fail("ssgd_nodes", "expected a positive integer");
  if (!g || *g < 1) fail("ssgd_gpus_per_node", "expected a positive integer");
  if (*n > static_cast<std::int64_t>(ranks) || *g > static_cast<std::int64_t>(ranks) ||
      *n * *g != static_cast<std::int64_t>(ranks)) {
    fail("ssgd_nodes", fmt::format("{} nodes x {} GPUs is not the {} rank files found", *n, *g, ranks));
  }
  return {*n, *g};
}

}  // namespace

ChakraImportSummary import_chakra(const std::vector<std::filesystem::path>& inputs,
                                  const std::filesystem::path& output) {
  ChakraImportSummary summary;
  const auto files = find_chakra_rank_files(inputs);
  v1::CaptureMetadata metadata;
  metadata.set_tool("ssgd import chakra");
  metadata.set_tool_version(std::string(ssgd_version()));
  metadata.set_world_size(static_cast<std::int32_t>(files.size()));
  metadata.set_provenance(fmt::format(
      "imported from Chakra execution traces: {}{}", files.front().path.string(),
      files.size() > 1 ? fmt::format(" and {} more", files.size() - 1) : std::string()));
  // One rank at a time: read, checked, written; a failure leaves the
  // writer's temporary file, which its destructor removes.
  std::optional<TraceWriter> writer;
  v1::Event event;
  for (const auto& f : files) {
    const std::string name = f.path.string();
    chakra::EtFileReader reader(f.path);
    if (f.rank == 0) {
      summary.version = reader.metadata().version;
      metadata.set_framework(summary.version.empty() ? "chakra" : "chakra " + summary.version);
      std::tie(summary.shape_nodes, summary.shape_gpus_per_node) =
          recorded_shape(reader.metadata(), name, files.size());
      // The shape as the trace says it elsewhere: a host per node, with its GPUs.
      for (std::int64_t h = 0; h < summary.shape_nodes; ++h) {
        v1::Host* host = metadata.add_hosts();
        host->set_hostname(fmt::format("node{}", h));
        for (std::int64_t d = 0; d < summary.shape_gpus_per_node; ++d) {
          host->add_gpus()->set_device_id(static_cast<std::int32_t>(d));
        }
      }
      writer.emplace(output, metadata);
    }
    if (reader.compressed()) ++summary.gzip_files;
    RankGraph g;
    chakra::Node node;
    while (reader.next(node)) {
      g.nodes.push_back(map_chakra_node(node, name, reader.nodes_read(), summary.counts));
      summary.dependencies +=
          static_cast<std::int64_t>(node.data_deps.size() + node.ctrl_deps.size());
    }
    summary.unknown_fields += reader.counts().unknown_fields;
    summary.nodes += static_cast<std::int64_t>(g.nodes.size());
    const WorkContext writing("checking and writing the execution graph of", name);
    check_graph(name, g);
    summary.files.push_back(f.path);
    for (auto& n : g.nodes) {
      event.set_rank(f.rank);
      *event.mutable_graph_node() = std::move(n);
      writer->append(event);
    }
  }
  if (summary.nodes == 0) {
    throw InputError({files.front().path.string(), std::nullopt, std::nullopt, ""},
                     fmt::format("the {} file{} hold{} no node: nothing to replay", files.size(),
                                 files.size() > 1 ? "s" : "", files.size() > 1 ? "" : "s"));
  }
  writer->close();
  return summary;
}

namespace {

// "a x2, b x1", the first 20 names, then how many more.
std::string counted(const std::map<std::string, std::int64_t>& counts) {
  constexpr std::size_t kShown = 20;
  std::vector<std::string> parts;
  for (const auto& [name, n] : counts) {
    if (parts.size() == kShown) break;
    parts.push_back(fmt::format("{} x{}", name, n));
  }
  if (counts.size() > kShown) parts.push_back(fmt::format("and {} more", counts.size() - kShown));
  return fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace

void print_chakra_import_summary(const ChakraImportSummary& s, const std::filesystem::path& output,
                                 std::ostream& out) {
  const auto& c = s.counts;
  out << fmt::format("{}{} -> {}\n", s.files.front().string(),
                     s.files.size() > 1 ? fmt::format(" ... {}", s.files.back().string()) : "",
                     output.string());
  out << fmt::format("  ranks        {} file{}{}, schema version {}\n", s.files.size(),
                     s.files.size() > 1 ? "s" : "",
                     s.gzip_files > 0 ? fmt::format(" ({} gzip)", s.gzip_files) : "",
                     s.version.empty() ? "not given" : s.version);
  out << (s.shape_nodes > 0
              ? fmt::format("  shape        {} node{} x {} GPU{} (recorded by ssgd export chakra)\n",
                            s.shape_nodes, s.shape_nodes > 1 ? "s" : "", s.shape_gpus_per_node,
                            s.shape_gpus_per_node > 1 ? "s" : "")
              : std::string("  shape        not recorded: a replay takes its nodes from the "
                            "scenario (cluster.gpus_per_node)\n"));
  out << fmt::format("  nodes        {}, {} dependencies: {}\n", s.nodes, s.dependencies,
                     counted(c.nodes_by_type));
  if (c.unknown_node_types > 0) {
    out << fmt::format(
        "  unknown      {} node{} of types ssgd does not know: replayed at their "
        "recorded times\n",
        c.unknown_node_types, c.unknown_node_types > 1 ? "s" : "");
  }
  if (!c.unmodelled_collectives.empty()) {
    out << fmt::format("  unmodelled   collectives replayed at their recorded times: {}\n",
                       counted(c.unmodelled_collectives));
  }
  if (!c.unknown_attributes.empty()) {
    out << fmt::format("  not read     attributes ssgd does not know: {}\n",
                       counted(c.unknown_attributes));
  }
  if (!c.unused_attributes.empty()) {
    out << fmt::format("  not used     attributes the replay does not use: {}\n",
                       counted(c.unused_attributes));
  }
  if (s.unknown_fields > 0) {
    out << fmt::format("  skipped      {} protobuf field{} the Chakra schema does not have\n",
                       s.unknown_fields, s.unknown_fields > 1 ? "s" : "");
  }
}

}  // namespace ssgd::trace
