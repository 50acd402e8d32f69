#include "traces/chakra/et_file.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "common/atomic_file.h"
#include "common/error.h"
#include "common/gzip_stream.h"
#include "common/input_file.h"
#include "traces/chakra/protobuf_wire.h"

namespace ssgd::chakra {

namespace {

// What a node or the GlobalMetadata may not repeat: an attribute without a
// name (nothing can ask for it), or a name given twice (the tools that read
// attributes keep one per name). Returns the field and the reason, or
// nothing.
std::optional<std::pair<std::string, std::string>> attribute_problem(
    std::string_view message, const std::vector<Attribute>& attrs) {
  std::vector<std::pair<std::string_view, std::size_t>> names;
  names.reserve(attrs.size());
  for (std::size_t i = 0; i < attrs.size(); ++i) {
    if (attrs[i].name.empty()) {
      return std::pair{fmt::format("{}.attr[{}].name", message, i),
                       std::string("an attribute without a name")};
    }
    names.emplace_back(attrs[i].name, i);
  }
  std::sort(names.begin(), names.end());
  for (std::size_t i = 1; i < names.size(); ++i) {
    if (names[i].first == names[i - 1].first) {
      return std::pair{fmt::format("{}.attr[{}].name", message, names[i].second),
                       fmt::format("attribute '{}' is given again: attr[{}] has it",
                                   bounded(names[i].first), names[i - 1].second)};
    }
  }
  return std::nullopt;
}

}  // namespace

EtFileReader::EtFileReader(const std::filesystem::path& path)
    : file_(path.string()), context_("reading", file_, "Chakra ET") {
  require_regular_file(path, "");
  in_ = std::make_unique<GzipReader>(path);
  if (!next_record()) {
    throw InputError({file_, std::nullopt, std::nullopt, ""},
                     "empty file: a Chakra ET starts with its GlobalMetadata record");
  }
  try {
    metadata_ = decode_metadata(record_, counts_);
  } catch (const MessageError& e) {
    fail(e.field(), fmt::format("{} (byte {} of the record); is this a Chakra ET file?", e.reason(),
                                e.offset()));
  }
  if (auto problem = attribute_problem("GlobalMetadata", metadata_.attrs)) {
    fail(problem->first, problem->second);
  }
}

EtFileReader::~EtFileReader() = default;

bool EtFileReader::compressed() const { return in_->compressed(); }

void EtFileReader::fail(const std::string& field, const std::string& what) const {
  InputLocation where{file_, std::nullopt, std::nullopt, field};
  if (record_index_ >= 0) where.record = record_index_;
  throw InputError(std::move(where), what);
}

bool EtFileReader::fill(std::size_t bytes) {
  if (pos_ > 0 && pos_ >= buffer_.size() / 2) {
    buffer_.erase(0, pos_);
    pos_ = 0;
  }
  while (buffer_.size() - pos_ < bytes) {
    // At most 1 MiB more at a time: a length prefix that promises more than
    // the file holds costs what the file holds, not what it promises.
    const std::size_t want = std::clamp<std::size_t>(bytes - (buffer_.size() - pos_),
                                                     std::size_t{1} << 16, std::size_t{1} << 20);
    const std::size_t old = buffer_.size();
    buffer_.resize(old + want);
    const std::size_t got = in_->read(buffer_.data() + old, want);
    buffer_.resize(old + got);
    if (got == 0) return false;
  }
  return true;
}

bool EtFileReader::next_record() {
  const bool have = fill(10);
  if (buffer_.size() == pos_) return false;
  ++record_index_;
  context_.set_position(record_index_);
  // The length prefix: a varint of at most 10 bytes.
  WireReader prefix(
      std::string_view(buffer_).substr(pos_, std::min<std::size_t>(10, buffer_.size() - pos_)));
  std::uint64_t length = 0;
  try {
    length = prefix.varint();
  } catch (const WireError&) {
    fail("",
         fmt::format("the record's length prefix at byte {} of the (uncompressed) file is not a "
                     "varint{}",
                     offset_, have ? "" : ": the file ends inside it"));
  }
  if (length > kMaxRecordBytes) {
    fail("", fmt::format("the record's length prefix at byte {} says {} bytes, more than the {} "
                         "bytes ssgd accepts for one record; is this a Chakra ET file?",
                         offset_, length, kMaxRecordBytes));
  }
  const std::size_t prefix_bytes = prefix.offset();
  if (!fill(prefix_bytes + length)) {
    fail("", fmt::format("the record at byte {} says it has {} bytes, but the file ends {} bytes "
                         "later; the file is truncated",
                         offset_, length, buffer_.size() - pos_ - prefix_bytes));
  }
  record_.assign(buffer_, pos_ + prefix_bytes, static_cast<std::size_t>(length));
  pos_ += prefix_bytes + static_cast<std::size_t>(length);
  offset_ += prefix_bytes + length;
  return true;
}

bool EtFileReader::next(Node& node) {
  if (!next_record()) return false;
  if (nodes_ >= kMaxNodes) {
    fail("", fmt::format("more than {} nodes; ssgd reads at most that many per file", kMaxNodes));
  }
  try {
    node = decode_node(record_, counts_);
  } catch (const MessageError& e) {
    fail(e.field(), fmt::format("{} (byte {} of the record)", e.reason(), e.offset()));
  }
  check_node(node);
  ++nodes_;
  return true;
}

void EtFileReader::check_node(const Node& node) {
  // Refused here, record by record, so that a file of empty or repeated
  // records (a run of zero bytes is a run of empty nodes, all id 0) stops at
  // its first bad record instead of being held whole first.
  if (node.name.empty() && node.type == static_cast<std::int32_t>(NodeType::kInvalid)) {
    fail("Node", fmt::format("node {} has no name and no type (INVALID_NODE){}: an empty node; a "
                             "Chakra node says what it is",
                             node.id, record_.empty() ? ", the record is empty (0 bytes)" : ""));
  }
  if (const auto [it, inserted] = ids_.try_emplace(node.id, record_index_); !inserted) {
    fail("Node.id", fmt::format("node id {} is used again: record {}", node.id, it->second));
  }
  if (auto problem = attribute_problem("Node", node.attrs)) fail(problem->first, problem->second);
}

ExecutionTrace read_execution_trace(const std::filesystem::path& path, DecodeCounts* counts) {
  EtFileReader reader(path);
  ExecutionTrace trace;
  trace.metadata = reader.metadata();
  Node node;
  while (reader.next(node)) trace.nodes.push_back(std::move(node));
  if (counts != nullptr) *counts = reader.counts();
  return trace;
}

std::string serialize_execution_trace(const ExecutionTrace& trace) {
  std::string file;
  const auto append = [&file](const std::string& bytes) {
    WireWriter len;
    len.varint(bytes.size());
    file += len.bytes();
    file += bytes;
  };
  append(encode_metadata(trace.metadata));
  for (const auto& node : trace.nodes) append(encode_node(node));
  return file;
}

void write_execution_trace(const std::filesystem::path& path, const ExecutionTrace& trace) {
  AtomicFile file(path, /*binary=*/true);
  const std::string bytes = serialize_execution_trace(trace);
  if (has_gzip_extension(path)) {
    GzipWriter gz(file.stream());
    gz.write(bytes);
    gz.finish();
  } else {
    file.stream().write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  file.commit();
}

bool parse_file_name(const std::string& name, std::string& prefix, std::int64_t& rank) {
  std::string stem = name;
  if (stem.size() > 3 && stem.ends_with(".gz")) stem.resize(stem.size() - 3);
  if (stem.size() <= 3 || !stem.ends_with(".et")) return false;
  stem.resize(stem.size() - 3);
  const auto dot = stem.rfind('.');
  if (dot == std::string::npos || dot + 1 == stem.size()) return false;
  const std::string digits = stem.substr(dot + 1);
  if (digits.size() > 9 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return false;
  }
  std::from_chars(digits.data(), digits.data() + digits.size(), rank);
  prefix = stem.substr(0, dot);
  return true;
}

std::string file_name(std::string_view prefix, std::int64_t rank, bool gzip) {
  return fmt::format("{}.{}.et{}", prefix, rank, gzip ? ".gz" : "");
}

}  // namespace ssgd::chakra
