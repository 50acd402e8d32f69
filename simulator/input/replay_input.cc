#include "simulator/input/replay_input.h"

#include <fstream>

#include "common/error.h"
#include "common/input_file.h"
#include "walk/execution_graph_reader.h"
#include "walk/trace_profile.h"
#include "traces/import/bcaffe/bcaffe_log.h"
#include "traces/trace_reader.h"

namespace ssgd::sim {
namespace {

std::string read_head(const std::filesystem::path& path, std::size_t n) {
  require_regular_file(path, "");
  std::ifstream in(path, std::ios::binary);
  std::error_code ec;
  if (!in) {
    throw InputError({path.string(), std::nullopt, std::nullopt, ""},
                     std::filesystem::exists(path, ec) ? "cannot be read" : "no such file");
  }
  std::string head(n, '\0');
  in.read(head.data(), static_cast<std::streamsize>(n));
  head.resize(static_cast<std::size_t>(in.gcount()));
  return head;
}

// What another tool's file is and the command that converts it, from its
// first bytes: a PyTorch profiler (Kineto) trace is JSON, often gzipped; a
// Chakra ET is a varint-framed protobuf.
std::string import_hint(std::string_view head) {
  const std::size_t text = head.find_first_not_of(" \t\r\n");
  if (head.size() >= 2 && static_cast<unsigned char>(head[0]) == 0x1f &&
      static_cast<unsigned char>(head[1]) == 0x8b) {
    return "; this is gzip-compressed (a PyTorch profiler trace, .json.gz?): convert it with "
           "'ssgd import pytorch FILE -o trace.ssgdt' (docs/kineto.md) and replay that";
  }
  if (text != std::string_view::npos && (head[text] == '{' || head[text] == '[')) {
    return "; this is JSON (a PyTorch profiler trace?): convert it with 'ssgd import pytorch FILE "
           "-o trace.ssgdt' (docs/kineto.md) and replay that; a JSON report of ssgd goes to "
           "'ssgd report'";
  }
  return "; other tools' files are converted by 'ssgd import' (pytorch, chakra, bcaffe)";
}

}  // namespace

const char* to_string(InputKind kind) {
  switch (kind) {
    case InputKind::kTrace: return "ssgd-trace";
    case InputKind::kLayerProfileCsv: return "layer-profile-csv";
    case InputKind::kBcaffeLog: return "bcaffe-log";
    case InputKind::kGraphTrace: return "graph-trace";
  }
  return "?";
}

ReplayInput load_replay_input(const std::filesystem::path& path, const ReplayInputOptions& options) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw InputError({path.string(), std::nullopt, std::nullopt, ""},
                     "is a directory; give a trace file, a layer-profile CSV or a B-Caffe log");
  }
  const std::string head = read_head(path, 4096);
  ReplayInput out;
  if (head.empty()) {
    throw InputError({path.string(), std::nullopt, std::nullopt, ""},
                     "empty file: expected an ssgd trace, a layer-profile CSV "
                     "(layer,name,forward_ns,backward_ns,grad_bytes[,comm_ns]) or a B-Caffe log");
  }
  // A damaged magic still goes to the trace reader, which says "wrong magic".
  if (trace::looks_like_trace(head) || head.substr(0, 8).find("SSGDT") != std::string::npos) {
    out.kind = InputKind::kTrace;
    auto reader = trace::TraceReader::open(path);
    if (const trace::v1::Event* first = reader.peek(); first && walk::starts_a_graph(*first)) {
      if (!options.allow_graph) {
        throw InputError({path.string(), std::nullopt, std::nullopt, ""},
                         "is an execution graph (a trace of graph_node events, from ssgd import "
                         "chakra): only `ssgd simulate` replays one; give the profile or trace it "
                         "came from here");
      }
      out.kind = InputKind::kGraphTrace;
      auto graph = std::make_shared<dag::ExecutionGraph>(
          walk::read_execution_graph(reader, path.string()));
      if (reader.truncated()) {
        // A graph cut short has lost nodes, and with them dependencies.
        throw trace::truncated_trace_error(reader, "; a graph cut short cannot be replayed");
      }
      out.execution_graph = std::move(graph);
      return out;
    }
    auto truncation = [&](const std::string& extra) {
      return trace::truncated_trace_error(reader, extra);
    };
    walk::TraceProfileResult result;
    try {
      result = walk::profile_from_trace(reader, path.string());
    } catch (const InputError& e) {
      // What is missing may have been in the part that was cut off.
      if (reader.truncated()) throw truncation(std::string("; what was read: ") + e.reason());
      throw;
    }
    if (reader.truncated() && !options.allow_truncated) {
      throw truncation("; pass --allow-truncated to replay the readable prefix");
    }
    // The reader has already logged the truncation warning when there is one.
    out.profile = std::move(result.profile);
    for (auto& w : result.warnings) out.warnings.push_back(path.string() + ": " + w);
  } else if (trace::looks_like_layer_profile_csv(head)) {
    out.kind = InputKind::kLayerProfileCsv;
    out.profile = trace::read_layer_profile_csv(path);
  } else if (trace::looks_like_bcaffe_log(head)) {
    out.kind = InputKind::kBcaffeLog;
    out.profile = trace::read_bcaffe_log(path);
  } else {
    throw InputError({path.string(), 1, std::nullopt, ""},
                     "not a recognised input: expected an ssgd trace, a layer-profile CSV whose "
                     "header holds layer,name,forward_ns,backward_ns,grad_bytes[,comm_ns], or a "
                     "B-Caffe per-gradient log" + import_hint(head));
  }
  return out;
}

}  // namespace ssgd::sim
