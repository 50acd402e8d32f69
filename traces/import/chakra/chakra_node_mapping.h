#pragma once
// One Chakra node (traces/chakra/chakra_et.h) to a GraphNode event
// (traces/proto/trace_events.proto), and what the mapping met, for the
// import's report: node types, attributes it does not know or does not use,
// collectives ssgd does not model. Nothing is dropped silently: every node
// becomes a GraphNode, and every attribute is either used or counted.
//
//   COMP_NODE               COMPUTE (on_cpu from is_cpu_op)
//   COMM_COLL_NODE          COLLECTIVE: comm_type (required) and comm_size
//                           in bytes (required), pg_name as the group
//   COMM_SEND_NODE          SEND to comm_dst, comm_size bytes, comm_tag
//   COMM_RECV_NODE          RECV from comm_src, comm_size bytes, comm_tag
//   MEM_LOAD_NODE,
//   MEM_STORE_NODE          MEMORY, tensor_size bytes
//   METADATA_NODE,
//   INVALID_NODE            METADATA (no work; kept for its dependencies)
//   any other type          UNKNOWN, replayed at its recorded time, counted
//
// Times: ssgd_start_ns and ssgd_duration_ns (int64, written by ssgd export
// chakra) when present, else start_time_micros and duration_micros x 1000.
// ssgd_task_kind, ssgd_iteration and ssgd_layer (ssgd export chakra) keep
// the S-SGD task each node was.

#include <cstdint>
#include <map>
#include <string>

#include "traces/chakra/chakra_et.h"
#include "traces/proto/trace_events.pb.h"

namespace ssgd::trace {

struct ChakraMappingCounts {
  std::map<std::string, std::int64_t> nodes_by_type;           // "COMP_NODE" -> nodes
  std::map<std::string, std::int64_t> unknown_attributes;      // names ssgd does not know
  std::map<std::string, std::int64_t> unused_attributes;       // known, not used by the replay
  std::map<std::string, std::int64_t> unmodelled_collectives;  // "BARRIER" -> nodes
  std::int64_t unknown_node_types = 0;
};

// Throws InputError naming `file`, the record (node k is record k + 1) and
// the field.
v1::GraphNode map_chakra_node(const chakra::Node& node, const std::string& file,
                              std::int64_t record, ChakraMappingCounts& counts);

}  // namespace ssgd::trace
