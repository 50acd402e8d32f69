#pragma once
// Chakra ET files (chakra_et.h): `<prefix>.<rank>.et`, plain or gzip, each
// message preceded by its length as a varint, GlobalMetadata first.
//
// EtFileReader streams a file one node at a time; beyond the node itself it
// holds a 1 MiB read buffer and each node id read (for the duplicate check),
// so a file of N nodes costs about 64 bytes a node. read_execution_trace()
// reads it whole. Every error is an ssgd::InputError naming the file, the
// record (0 is the GlobalMetadata, node k is record k + 1) and the field,
// with the byte offset in the record: a length past the end of the file, a
// record larger than kMaxRecordBytes, a malformed field (et_messages.h), a
// file with no GlobalMetadata. A file of more than kMaxNodes nodes is
// refused.
//
// Records the format does not allow to be empty or repeated are refused as
// they are read, before the rest of the file is: a node with neither a name
// nor a type (an empty record is one: a run of zero bytes is a run of them),
// a node id used again, an attribute without a name or whose name the same
// node (or the GlobalMetadata) already has. A gzip file is read through
// GzipReader, whose expansion is bounded (common/gzip_stream.h). While a
// reader is open, an out-of-memory exit names its file and record
// (common/work_context.h).

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "common/work_context.h"
#include "traces/chakra/chakra_et.h"
#include "traces/chakra/et_messages.h"

namespace ssgd {
class GzipReader;
}

namespace ssgd::chakra {

inline constexpr std::uint64_t kMaxRecordBytes = 256ull << 20;
inline constexpr std::int64_t kMaxNodes = std::int64_t{1} << 27;

class EtFileReader {
 public:
  // Opens `path` and reads its GlobalMetadata.
  explicit EtFileReader(const std::filesystem::path& path);
  ~EtFileReader();
  EtFileReader(const EtFileReader&) = delete;
  EtFileReader& operator=(const EtFileReader&) = delete;

  [[nodiscard]] const GlobalMetadata& metadata() const { return metadata_; }
  // The next node; false at the end of the file.
  bool next(Node& node);
  [[nodiscard]] std::int64_t nodes_read() const { return nodes_; }
  [[nodiscard]] const DecodeCounts& counts() const { return counts_; }
  [[nodiscard]] bool compressed() const;
  [[nodiscard]] const std::string& file() const { return file_; }

 private:
  // The next record's bytes into record_; false at a clean end of file.
  bool next_record();
  bool fill(std::size_t bytes);  // at least `bytes` unread in buffer_; false at EOF
  void check_node(const Node& node);  // the rules above, for the node just read
  [[noreturn]] void fail(const std::string& field, const std::string& what) const;

  std::string file_;
  WorkContext context_;
  std::unique_ptr<GzipReader> in_;
  std::string buffer_;
  std::size_t pos_ = 0;
  std::uint64_t offset_ = 0;  // uncompressed offset of buffer_[pos_]
  std::string record_;
  std::int64_t record_index_ = -1;
  std::int64_t nodes_ = 0;
  GlobalMetadata metadata_;
  DecodeCounts counts_;
  std::unordered_map<std::uint64_t, std::int64_t> ids_;  // node id -> its record
};

ExecutionTrace read_execution_trace(const std::filesystem::path& path,
                                    DecodeCounts* counts = nullptr);

// The bytes of a whole ET file, uncompressed.
std::string serialize_execution_trace(const ExecutionTrace& trace);

// A job's files are named `<prefix>.<rank>.et` (ASTRA-sim opens
// `<prefix>.<id>.et` for NPU id); ssgd also writes and reads
// `<prefix>.<rank>.et.gz`. parse_file_name gives the prefix and the rank of
// such a name (at most 9 digits), false for another name.
bool parse_file_name(const std::string& name, std::string& prefix, std::int64_t& rank);
std::string file_name(std::string_view prefix, std::int64_t rank, bool gzip);

// Writes `trace` to `path` through an AtomicFile, gzip when the name ends in
// ".gz". Throws std::runtime_error naming the file when the write fails.
void write_execution_trace(const std::filesystem::path& path, const ExecutionTrace& trace);

}  // namespace ssgd::chakra
