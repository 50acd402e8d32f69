#pragma once
// Reads a .ssgdt trace file (layout: traces/container_format.h) one event at
// a time, holding a single chunk in memory.
//
// Every problem is an ssgd::InputError naming the file, the record (the
// 0-based chunk index; for the footer, the number of chunks before it) and
// the byte offset, except one: a file that simply ends early (a crash during
// capture, a partial copy) is read up to its last whole chunk, after which
// truncated() is true and a warning is logged once.

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/error.h"
#include "common/work_context.h"
#include "traces/proto/capture_metadata.pb.h"
#include "traces/proto/trace_events.pb.h"
#include "traces/proto/trace_file.pb.h"

namespace ssgd::trace {

class TraceReader {
 public:
  // Opens the file and reads its header. Throws ssgd::InputError when the
  // file is missing or unreadable, has the wrong magic or an unsupported
  // format version, or its header is cut short or corrupt.
  static TraceReader open(const std::filesystem::path& path);

  ~TraceReader();
  TraceReader(TraceReader&&) noexcept;
  TraceReader& operator=(TraceReader&&) noexcept;
  TraceReader(const TraceReader&) = delete;
  TraceReader& operator=(const TraceReader&) = delete;

  [[nodiscard]] const v1::CaptureMetadata& metadata() const { return metadata_; }

  // Reads the next event into `event`; false at the end of the events (the
  // footer was read, or the file was cut short). Throws ssgd::InputError on
  // a corrupt chunk (bad marker, CRC, length, zstd frame or event) or a
  // footer that disagrees with what was read; the reader is then unusable.
  bool next(v1::Event& event);

  // The next event without taking it: next() returns it. Null at the end of
  // the events. Throws as next() does. For a reader that must see the first
  // event to know what the trace holds (walk/execution_graph_reader.h).
  const v1::Event* peek();

  // After next() returned false: the file ended before its footer.
  [[nodiscard]] bool truncated() const { return truncated_; }
  // Why, e.g. "x.ssgdt: cut short at byte 5120 (in the data of chunk 3)
  // after 3 whole chunks (12000 events); the rest is lost". Empty if not.
  [[nodiscard]] const std::string& truncation_warning() const { return warning_; }
  // The footer, once next() has returned false; null when there is none.
  [[nodiscard]] const v1::Footer* footer() const { return footer_ ? &*footer_ : nullptr; }

  [[nodiscard]] std::uint64_t chunks_read() const { return chunks_read_; }
  [[nodiscard]] std::uint64_t events_read() const { return events_read_; }
  [[nodiscard]] std::uint32_t format_version() const { return format_version_; }
  // The path as given to open(), as used in messages.
  [[nodiscard]] const std::string& file_name() const { return file_; }

 private:
  struct Decompressor;
  TraceReader() = default;

  void read_header();
  bool read_record();  // loads the next chunk or the footer; false at the end
  bool read_footer(std::uint64_t record_offset);
  void parse_event(v1::Event& event);
  bool cut_short(std::uint64_t at, const std::string& where);
  std::size_t read_up_to(char* dst, std::size_t n);
  [[noreturn]] void fail(std::optional<std::int64_t> record, const std::string& what) const;

  std::string file_;
  std::ifstream in_;
  std::uint64_t file_size_ = 0;
  std::uint64_t offset_ = 0;  // bytes consumed from in_
  std::uint32_t format_version_ = 0;
  v1::CaptureMetadata metadata_;
  std::optional<v1::Footer> footer_;

  // The chunk being read: its index and file offset, its decompressed
  // EventChunk bytes, the read position in them and its event counts.
  std::uint64_t chunk_index_ = 0;
  std::uint64_t chunk_offset_ = 0;
  std::string compressed_;
  std::string chunk_;
  std::size_t chunk_pos_ = 0;
  std::uint32_t chunk_events_ = 0;
  std::uint32_t chunk_events_seen_ = 0;

  std::uint64_t chunks_read_ = 0;
  std::uint64_t events_read_ = 0;
  bool at_end_ = false;
  bool truncated_ = false;
  std::string warning_;
  std::unique_ptr<Decompressor> decompressor_;
  std::optional<v1::Event> peeked_;  // peek()'s event, until next() takes it
  WorkContext context_;  // an out-of-memory exit names the file, chunk and event
};

// The error for a trace that was cut short, where the caller does not accept
// one: names the file and the chunk (record) where it ends, then says why
// (truncation_warning() without the file name) and `advice`.
InputError truncated_trace_error(const TraceReader& reader, const std::string& advice);

// True when `head` (the first bytes of a file) starts with the .ssgdt magic.
bool looks_like_trace(std::string_view head);

}  // namespace ssgd::trace
