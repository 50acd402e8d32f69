#pragma once
// `ssgd import chakra DIR|FILES -o OUT.ssgdt`: a job's per-rank Chakra
// execution traces (plain or gzip, traces/chakra/) to one ssgd trace of
// GraphNode events (traces/proto/trace_events.proto), which `ssgd
// simulate` replays as the graph it is (docs/chakra.md).
//
// The ranks are read one at a time, so memory holds one rank's graph. Each
// rank's graph is checked before its events are written: node ids are
// unique within the rank, every data and control dependency names a node of
// the same rank, and there is no cycle. Each failure is an InputError
// naming the file, the node's record and id. Every node is kept; node
// types and attributes ssgd does not know, and collectives it does not
// model, are counted in the summary (chakra_node_mapping.h). The ranks'
// shape (nodes x GPUs) is kept when rank 0's metadata records it, and must
// then agree with the files' count. A job with no
// node is an error. The output is written under a temporary name and
// renamed into place once every rank is in, so a failed import leaves
// nothing behind.

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "traces/import/chakra/chakra_node_mapping.h"

namespace ssgd::trace {

struct ChakraImportSummary {
  std::vector<std::filesystem::path> files;  // by rank
  std::string version;                       // rank 0's GlobalMetadata.version
  std::int64_t nodes = 0;
  std::int64_t dependencies = 0;    // data and control edges
  std::int64_t unknown_fields = 0;  // protobuf fields the schema does not have
  std::int64_t gzip_files = 0;
  // The ranks' shape from rank 0's GlobalMetadata (ssgd_nodes and
  // ssgd_gpus_per_node, which `ssgd export chakra` writes): kept in the
  // trace's hosts, one per node with its GPUs. 0: not recorded.
  std::int64_t shape_nodes = 0, shape_gpus_per_node = 0;
  ChakraMappingCounts counts;
};

ChakraImportSummary import_chakra(const std::vector<std::filesystem::path>& inputs,
                                  const std::filesystem::path& output);

// What `ssgd import chakra` prints: ranks, nodes by type, and everything
// ssgd did not use (unknown node types and attributes, unmodelled
// collectives, unknown protobuf fields), each with its count.
void print_chakra_import_summary(const ChakraImportSummary& summary,
                                 const std::filesystem::path& output, std::ostream& out);

}  // namespace ssgd::trace
