#include "dag/execution_graph.h"

#include <limits>
#include <unordered_map>

#include <fmt/format.h>

#include "common/error.h"

namespace ssgd::dag {

const char* to_string(GraphNodeKind kind) {
  switch (kind) {
    case GraphNodeKind::kCompute: return "compute";
    case GraphNodeKind::kCollective: return "collective";
    case GraphNodeKind::kSend: return "send";
    case GraphNodeKind::kRecv: return "recv";
    case GraphNodeKind::kMemory: return "memory";
    case GraphNodeKind::kMetadata: return "metadata";
    case GraphNodeKind::kUnknown: return "unknown";
  }
  return "?";
}

}  // namespace ssgd::dag
