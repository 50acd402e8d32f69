#pragma once
// What `ssgd simulate` replays, recognised by content, not by file name:
//   an ssgd trace        (starts with the trace magic)         -> layers from its markers
//   a graph trace        (an ssgd trace of GraphNode events,   -> the graph itself
//                         `ssgd import chakra`)                   (dag/execution_graph.h)
//   a layer-profile CSV  (header with layer, forward_ns, ...)  -> as written
//   a B-Caffe timing log (lines ending in [id, size, ...])     -> read as its README says

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "dag/execution_graph.h"
#include "traces/layer_profile.h"

namespace ssgd::sim {

enum class InputKind { kTrace, kLayerProfileCsv, kBcaffeLog, kGraphTrace };
const char* to_string(InputKind kind);

struct ReplayInput {
  InputKind kind = InputKind::kLayerProfileCsv;
  trace::LayerProfile profile;                         // all kinds but kGraphTrace
  std::shared_ptr<const dag::ExecutionGraph> execution_graph;  // kGraphTrace
  std::vector<std::string> warnings;  // for stderr
};

struct ReplayInputOptions {
  bool allow_truncated = false;  // replay the readable prefix of a trace cut short
  // Accept an execution graph (a graph trace): only `ssgd simulate` replays
  // one; for every other use it is an InputError saying so.
  bool allow_graph = false;
};

// Throws ssgd::InputError: unreadable file, unrecognised content, or any error
// of the format's reader. A trace cut short is an error unless
// allow_truncated, which makes it a warning.
ReplayInput load_replay_input(const std::filesystem::path& path,
                              const ReplayInputOptions& options = {});

}  // namespace ssgd::sim
