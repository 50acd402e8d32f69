#include "traces/trace_writer.h"

#include <google/protobuf/io/coded_stream.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "common/atomic_file.h"
#include "traces/container_format.h"
#include "traces/crc32c.h"
#include "traces/event_rules.h"

namespace ssgd::trace {

// One zstd compression context, reused for every chunk.
struct TraceWriter::Compressor {
  struct Free {
    void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
  };
  std::unique_ptr<ZSTD_CCtx, Free> cctx{ZSTD_createCCtx()};
  std::string out;
};

namespace {

std::string bytes_of(const auto& array) { return std::string(array.begin(), array.end()); }

}  // namespace

bool event_time_span(const v1::Event& event, std::int64_t& start_ns, std::int64_t& end_ns) {
  auto take = [&](const auto& payload) {
    start_ns = payload.start_ns();
    end_ns = payload.end_ns();
    return true;
  };
  switch (event.payload_case()) {
    case v1::Event::kKernel: return take(event.kernel());
    case v1::Event::kMemcpy: return take(event.memcpy());
    case v1::Event::kMemset: return take(event.memset());
    case v1::Event::kCollective: return take(event.collective());
    case v1::Event::kMarker: return take(event.marker());
    case v1::Event::kApiCall: return take(event.api_call());
    case v1::Event::kSynchronization: return take(event.synchronization());
    case v1::Event::kGraphNode: return take(event.graph_node());
    case v1::Event::kCudaEvent:
      start_ns = end_ns = event.cuda_event().timestamp_ns();
      return true;
    case v1::Event::kExternalCorrelation:
    case v1::Event::kDevice:
    case v1::Event::kLink:
    case v1::Event::PAYLOAD_NOT_SET: break;
  }
  return false;
}

TraceWriter::TraceWriter(const std::filesystem::path& path, const v1::CaptureMetadata& metadata,
                         TraceWriterOptions options)
    : path_(path), options_(options) {
  if (options_.events_per_chunk == 0) {
    throw std::invalid_argument("TraceWriter: events_per_chunk must be at least 1");
  }
  if (options_.zstd_level < 1 || options_.zstd_level > ZSTD_maxCLevel()) {
    throw std::invalid_argument("TraceWriter: zstd_level must be in 1.." +
                                std::to_string(ZSTD_maxCLevel()));
  }
  if (auto broken = check_metadata(metadata)) {
    broken->field = "metadata." + broken->field;
    throw InvalidTraceContent(std::move(*broken));
  }
  world_size_ = metadata.world_size();
  std::string metadata_bytes;
  if (!metadata.SerializeToString(&metadata_bytes) ||
      metadata_bytes.size() > format::kMaxHeaderBytes) {
    throw std::invalid_argument("TraceWriter: capture metadata for '" + path.string() +
                                "' cannot be serialized within " +
                                std::to_string(format::kMaxHeaderBytes) + " bytes");
  }
  compressor_ = std::make_unique<Compressor>();
  if (!compressor_->cctx) throw std::runtime_error("TraceWriter: cannot create a zstd context");
  file_ = std::make_unique<AtomicFile>(path, /*binary=*/true);

  // magic | version | length | metadata | CRC of everything after the magic.
  std::string header = bytes_of(format::kMagic);
  format::append_u32_le(header, format::kFormatVersion);
  format::append_u32_le(header, static_cast<std::uint32_t>(metadata_bytes.size()));
  header += metadata_bytes;
  format::append_u32_le(header, crc32c(std::string_view(header).substr(format::kMagic.size())));
  write(header);
}

TraceWriter::~TraceWriter() = default;
TraceWriter::TraceWriter(TraceWriter&&) noexcept = default;
TraceWriter& TraceWriter::operator=(TraceWriter&&) noexcept = default;

namespace {

// The message of a failed write, with the system's reason when it left one
// (no space left on device, file too large).
std::string write_error(const std::filesystem::path& path) {
  const int error = errno;
  return "error while writing '" + path.string() + "'" +
         (error != 0 ? std::string(": ") + std::strerror(error) : std::string());
}

}  // namespace

void TraceWriter::write(const std::string& bytes) {
  auto& out = file_->stream();
  if (out) errno = 0;  // else errno may still hold why an earlier write failed
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error(write_error(path_));
}

void TraceWriter::append(const v1::Event& event) {
  if (closed_) throw std::logic_error("TraceWriter::append after close()");
  if (auto broken = check_event(event, world_size_)) throw InvalidTraceContent(std::move(*broken));
  const std::size_t size = event.ByteSizeLong();
  if (size > format::kMaxEventBytes) {
    throw std::invalid_argument("TraceWriter: an event of " + std::to_string(size) +
                                " bytes exceeds the limit of " +
                                std::to_string(format::kMaxEventBytes));
  }
  if (buffer_.size() + size + 6 > format::kWriterMaxChunkBytes) flush_chunk();

  // EventChunk wire format: tag of field 1, varint length, the event.
  buffer_.push_back(static_cast<char>(format::kEventTag));
  std::uint8_t varint[5];  // a varint32 takes at most 5 bytes
  const std::uint8_t* varint_end = google::protobuf::io::CodedOutputStream::WriteVarint32ToArray(
      static_cast<std::uint32_t>(size), varint);
  buffer_.append(reinterpret_cast<const char*>(varint), reinterpret_cast<const char*>(varint_end));
  const std::size_t at = buffer_.size();
  buffer_.resize(at + size);
  event.SerializeWithCachedSizesToArray(reinterpret_cast<std::uint8_t*>(buffer_.data() + at));
  ++buffered_events_;

  switch (event.payload_case()) {
    case v1::Event::kKernel: footer_.set_kernel_count(footer_.kernel_count() + 1); break;
    case v1::Event::kMemcpy: footer_.set_memcpy_count(footer_.memcpy_count() + 1); break;
    case v1::Event::kMemset: footer_.set_memset_count(footer_.memset_count() + 1); break;
    case v1::Event::kCollective:
      footer_.set_collective_count(footer_.collective_count() + 1);
      break;
    case v1::Event::kMarker: footer_.set_marker_count(footer_.marker_count() + 1); break;
    case v1::Event::kApiCall: footer_.set_api_call_count(footer_.api_call_count() + 1); break;
    case v1::Event::kSynchronization:
      footer_.set_synchronization_count(footer_.synchronization_count() + 1);
      break;
    case v1::Event::kCudaEvent: footer_.set_cuda_event_count(footer_.cuda_event_count() + 1); break;
    case v1::Event::kExternalCorrelation:
      footer_.set_external_correlation_count(footer_.external_correlation_count() + 1);
      break;
    case v1::Event::kDevice: footer_.set_device_count(footer_.device_count() + 1); break;
    case v1::Event::kLink: footer_.set_link_count(footer_.link_count() + 1); break;
    case v1::Event::kGraphNode:
      footer_.set_graph_node_count(footer_.graph_node_count() + 1);
      break;
    case v1::Event::PAYLOAD_NOT_SET: break;
  }
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  if (event_time_span(event, start_ns, end_ns)) {
    footer_.set_first_timestamp_ns(has_time_ ? std::min(footer_.first_timestamp_ns(), start_ns)
                                             : start_ns);
    footer_.set_last_timestamp_ns(has_time_ ? std::max(footer_.last_timestamp_ns(), end_ns)
                                            : end_ns);
    has_time_ = true;
  }
  footer_.set_event_count(footer_.event_count() + 1);

  if (buffered_events_ >= options_.events_per_chunk) flush_chunk();
}

void TraceWriter::flush_chunk() {
  if (closed_) throw std::logic_error("TraceWriter::flush_chunk after close()");
  if (buffered_events_ == 0) return;
  auto& z = *compressor_;
  z.out.resize(ZSTD_compressBound(buffer_.size()));
  const std::size_t n = ZSTD_compressCCtx(z.cctx.get(), z.out.data(), z.out.size(), buffer_.data(),
                                          buffer_.size(), options_.zstd_level);
  if (ZSTD_isError(n) != 0u) {
    throw std::runtime_error("TraceWriter: zstd compression failed for '" + path_.string() +
                             "': " + ZSTD_getErrorName(n));
  }
  z.out.resize(n);

  // marker | C | U | N | CRC of the data | CRC of the 20 bytes before it.
  std::string header = bytes_of(format::kChunkMarker);
  format::append_u32_le(header, static_cast<std::uint32_t>(n));
  format::append_u32_le(header, static_cast<std::uint32_t>(buffer_.size()));
  format::append_u32_le(header, buffered_events_);
  format::append_u32_le(header, crc32c(z.out));
  format::append_u32_le(header, crc32c(header));
  write(header);
  write(z.out);

  footer_.set_chunk_count(footer_.chunk_count() + 1);
  buffer_.clear();
  buffered_events_ = 0;
}

const std::filesystem::path& TraceWriter::temporary_path() const {
  return file_->temporary_path();
}

void TraceWriter::flush() {
  flush_chunk();
  auto& out = file_->stream();
  if (out) errno = 0;
  out.flush();
  if (!out) throw std::runtime_error(write_error(path_));
}

void TraceWriter::add_dropped(std::uint64_t n) {
  footer_.set_dropped_records(footer_.dropped_records() + n);
}

void TraceWriter::add_invalid_timestamps(std::uint64_t n) {
  footer_.set_invalid_timestamps(footer_.invalid_timestamps() + n);
}

void TraceWriter::set_clock_calibration(const v1::ClockCalibration& calibration) {
  *footer_.mutable_clock_calibration() = calibration;
}

void TraceWriter::add_nccl_plugin_counts(std::uint64_t events_dropped,
                                         std::uint64_t incomplete_collectives,
                                         std::uint64_t orphan_events) {
  footer_.set_nccl_events_dropped(footer_.nccl_events_dropped() + events_dropped);
  footer_.set_nccl_incomplete_collectives(footer_.nccl_incomplete_collectives() +
                                          incomplete_collectives);
  footer_.set_nccl_orphan_events(footer_.nccl_orphan_events() + orphan_events);
}

void TraceWriter::close() {
  if (closed_) return;
  flush_chunk();
  std::string footer_bytes;
  footer_.SerializeToString(&footer_bytes);
  // marker | F | CRC of both | footer | CRC of the footer | end magic.
  std::string record = bytes_of(format::kFooterMarker);
  format::append_u32_le(record, static_cast<std::uint32_t>(footer_bytes.size()));
  format::append_u32_le(record, crc32c(record));
  record += footer_bytes;
  format::append_u32_le(record, crc32c(footer_bytes));
  record += bytes_of(format::kEndMagic);
  write(record);
  file_->commit();
  closed_ = true;
}

}  // namespace ssgd::trace
