#pragma once
// Writes a .ssgdt trace file (layout: traces/container_format.h).
//
// Streaming: events are buffered until a chunk is full, then compressed and
// written, so memory stays at one chunk whatever the trace length. The file
// is written under a temporary name (path + ".tmp.<pid>") and renamed into
// place by close(); a writer destroyed without close() removes it, so a
// failed run never leaves a half-written trace. The same metadata and events
// always give a byte-identical file.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "traces/proto/capture_metadata.pb.h"
#include "traces/proto/trace_events.pb.h"
#include "traces/proto/trace_file.pb.h"

namespace ssgd {
class AtomicFile;
}

namespace ssgd::trace {

struct TraceWriterOptions {
  // Events per chunk: a chunk is also cut once its events reach
  // format::kWriterMaxChunkBytes uncompressed.
  std::size_t events_per_chunk = 8192;
  // zstd compression level (1..19); 3 is zstd's own default.
  int zstd_level = 3;
};

class TraceWriter {
 public:
  // Creates the temporary file and writes the header. Throws
  // std::runtime_error when the file cannot be created, std::invalid_argument
  // on bad options or metadata larger than format::kMaxHeaderBytes, and
  // InvalidTraceContent (event_rules.h) for metadata that breaks a rule.
  TraceWriter(const std::filesystem::path& path, const v1::CaptureMetadata& metadata,
              TraceWriterOptions options = {});
  ~TraceWriter();
  TraceWriter(TraceWriter&&) noexcept;
  TraceWriter& operator=(TraceWriter&&) noexcept;
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  // Buffers one event and writes a chunk when the buffer is full. Throws
  // InvalidTraceContent for an event that breaks a rule of event_rules.h
  // (nothing is written then, and the writer stays usable),
  // std::invalid_argument for an event over format::kMaxEventBytes,
  // std::runtime_error on a write error, std::logic_error after close().
  void append(const v1::Event& event);
  // Writes the buffered events as one chunk; does nothing when none are.
  // The chunk may still sit in the stream's buffer in this process.
  void flush_chunk();
  // flush_chunk(), then hands every byte written so far to the OS (no
  // fsync): a process killed afterwards leaves a temporary file that
  // TraceReader reads up to this chunk. Throws std::runtime_error on a write
  // error, std::logic_error after close().
  void flush();
  // Footer counters: records the caller lost or discarded before append().
  void add_dropped(std::uint64_t n);
  void add_invalid_timestamps(std::uint64_t n);
  // The clock calibration measured over the whole capture, for the footer
  // (Footer.clock_calibration); the header holds only what was known first.
  void set_clock_calibration(const v1::ClockCalibration& calibration);
  // The NCCL plugin's footer counters (Footer fields 19-21), added.
  void add_nccl_plugin_counts(std::uint64_t events_dropped, std::uint64_t incomplete_collectives,
                              std::uint64_t orphan_events);
  // Writes the last chunk and the footer and renames the file into place
  // (no fsync). Throws std::runtime_error on an I/O error, in which case
  // the temporary file is removed when the writer is destroyed.
  void close();

  // The totals so far; after close(), the footer as written.
  [[nodiscard]] const v1::Footer& footer() const { return footer_; }
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }
  // The temporary file written until close() renames it to path().
  [[nodiscard]] const std::filesystem::path& temporary_path() const;

 private:
  struct Compressor;
  void write(const std::string& bytes);

  std::filesystem::path path_;
  TraceWriterOptions options_;
  std::unique_ptr<AtomicFile> file_;
  std::unique_ptr<Compressor> compressor_;
  std::string buffer_;  // the chunk being filled: EventChunk wire format
  std::uint32_t buffered_events_ = 0;
  v1::Footer footer_;
  std::int32_t world_size_ = 0;  // the header's, for the rank rule (event_rules.h)
  bool has_time_ = false;  // footer_ holds a first/last timestamp
  bool closed_ = false;
};

// The [start_ns, end_ns] of an event's payload (a CudaEvent's timestamp for
// both); false for an event without a payload or whose payload has no time
// (ExternalCorrelation, device, link). Shared by the writer's footer and the
// summaries.
bool event_time_span(const v1::Event& event, std::int64_t& start_ns, std::int64_t& end_ns);

}  // namespace ssgd::trace
