#include "traces/trace_reader.h"

#include <fmt/format.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/error.h"
#include "common/input_file.h"
#include "common/logging.h"
#include "traces/container_format.h"
#include "traces/crc32c.h"
#include "traces/event_rules.h"

namespace ssgd::trace {

// One zstd decompression context, reused for every chunk.
struct TraceReader::Decompressor {
  struct Free {
    void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
  };
  std::unique_ptr<ZSTD_DCtx, Free> dctx{ZSTD_createDCtx()};
};

namespace {

std::string hex32(std::uint32_t v) { return fmt::format("0x{:08x}", v); }

std::string hex_bytes(const void* data, std::size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  std::string s;
  for (std::size_t i = 0; i < n; ++i) s += fmt::format("{}{:02x}", i == 0 ? "" : " ", p[i]);
  return s;
}

template <std::size_t N>
bool same_bytes(const char* p, const std::array<unsigned char, N>& expected) {
  return std::memcmp(p, expected.data(), N) == 0;
}

std::string plural(std::uint64_t n, const char* word) {
  return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
}

}  // namespace

TraceReader::~TraceReader() = default;
TraceReader::TraceReader(TraceReader&&) noexcept = default;
TraceReader& TraceReader::operator=(TraceReader&&) noexcept = default;

bool looks_like_trace(std::string_view head) {
  return head.size() >= format::kMagic.size() && same_bytes(head.data(), format::kMagic);
}

void TraceReader::fail(std::optional<std::int64_t> record, const std::string& what) const {
  throw InputError(InputLocation{file_, std::nullopt, record, ""}, what);
}

TraceReader TraceReader::open(const std::filesystem::path& path) {
  TraceReader r;
  r.file_ = path.string();
  r.context_ = WorkContext("reading", r.file_, "ssgd trace", "chunk", "event");
  std::error_code ec;
  require_regular_file(path, "");  // a FIFO would block, a device never end
  r.in_.open(path, std::ios::in | std::ios::binary);
  if (!r.in_) r.fail(std::nullopt, std::string("cannot open the trace: ") + std::strerror(errno));
  r.file_size_ = std::filesystem::file_size(path, ec);
  if (ec) r.fail(std::nullopt, "cannot read the trace's size: " + ec.message());
  r.decompressor_ = std::make_unique<Decompressor>();
  if (!r.decompressor_->dctx) throw std::runtime_error("cannot create a zstd context");
  r.read_header();
  return r;
}

std::size_t TraceReader::read_up_to(char* dst, std::size_t n) {
  in_.read(dst, static_cast<std::streamsize>(n));
  const auto got = static_cast<std::size_t>(in_.gcount());
  if (in_.bad()) fail(std::nullopt, fmt::format("read error at byte offset {}", offset_ + got));
  in_.clear();
  offset_ += got;
  return got;
}

void TraceReader::read_header() {
  std::array<char, format::kFileHeaderFixedBytes> fixed{};
  const std::size_t n = read_up_to(fixed.data(), fixed.size());
  if (n == 0) fail(std::nullopt, "the file is empty, not an ssgd trace");
  const std::size_t magic_seen = std::min(n, format::kMagic.size());
  if (std::memcmp(fixed.data(), format::kMagic.data(), magic_seen) != 0) {
    const bool text =
        std::all_of(fixed.begin(), fixed.begin() + static_cast<std::ptrdiff_t>(n),
                    [](char c) { return c == '\n' || c == '\t' || (c >= ' ' && c < 127); });
    fail(std::nullopt,
         fmt::format("wrong magic: not an ssgd trace (it starts with {}, a trace with {}){}",
                     hex_bytes(fixed.data(), magic_seen),
                     hex_bytes(format::kMagic.data(), format::kMagic.size()),
                     text ? "; it looks like text: a text trace must be packed with `ssgd pack` "
                            "first"
                          : ""));
  }
  if (n < fixed.size()) {
    fail(std::nullopt, fmt::format("header cut short: the file has {} bytes, the fixed header {}",
                                   file_size_, fixed.size()));
  }
  format_version_ = format::load_u32_le(fixed.data() + 8);
  if (format_version_ != format::kFormatVersion) {
    fail(std::nullopt,
         fmt::format("format version {} is not supported (this build reads version {})",
                     format_version_, format::kFormatVersion));
  }
  const std::uint32_t length = format::load_u32_le(fixed.data() + 12);
  if (length > format::kMaxHeaderBytes) {
    fail(std::nullopt,
         fmt::format("header_length {} at byte offset 12 exceeds the limit of {} bytes", length,
                     format::kMaxHeaderBytes));
  }
  const std::uint64_t needed = fixed.size() + std::uint64_t{length} + format::kCrcBytes;
  if (needed > file_size_) {
    fail(std::nullopt,
         fmt::format("header cut short: it needs {} bytes, the file has {}", needed, file_size_));
  }
  // Version and length are covered by the header CRC with the metadata.
  std::string buf(fixed.data() + 8, 8);
  buf.resize(8 + std::size_t{length} + format::kCrcBytes);
  if (read_up_to(buf.data() + 8, length + format::kCrcBytes) != length + format::kCrcBytes) {
    fail(std::nullopt, fmt::format("header cut short: it needs {} bytes", needed));
  }
  const std::uint32_t stored = format::load_u32_le(buf.data() + 8 + length);
  const std::uint32_t computed = crc32c_extend(0, buf.data(), 8 + std::size_t{length});
  if (stored != computed) {
    fail(std::nullopt, fmt::format("header CRC-32C mismatch (stored {}, computed {}): bytes 8..{} "
                                   "are corrupt",
                                   hex32(stored), hex32(computed), needed - format::kCrcBytes));
  }
  if (!metadata_.ParseFromArray(buf.data() + 8, static_cast<int>(length))) {
    fail(std::nullopt, fmt::format("the header's {} bytes at byte offset 16 are not a valid "
                                   "CaptureMetadata",
                                   length));
  }
  if (auto bad = check_metadata(metadata_)) {
    throw InputError(InputLocation{file_, std::nullopt, std::nullopt, "metadata." + bad->field},
                     "the capture header: " + bad->what);
  }
}

bool TraceReader::next(v1::Event& event) {
  if (peeked_) {
    event = std::move(*peeked_);
    peeked_.reset();
    return true;
  }
  while (chunk_pos_ >= chunk_.size()) {
    if (at_end_ || !read_record()) return false;
  }
  context_.set_inner_position(static_cast<std::int64_t>(events_read_));
  parse_event(event);
  return true;
}

const v1::Event* TraceReader::peek() {
  if (!peeked_) {
    v1::Event event;
    if (!next(event)) return nullptr;
    peeked_ = std::move(event);
  }
  return &*peeked_;
}

bool TraceReader::cut_short(std::uint64_t at, const std::string& where) {
  truncated_ = true;
  at_end_ = true;
  chunk_.clear();
  chunk_pos_ = 0;
  warning_ = fmt::format(
      "{}: cut short: the file ends at byte {}, {} (byte offset {}); read {} ({}), "
      "the rest is lost",
      file_, file_size_, where, at, plural(chunks_read_, "whole chunk"),
      plural(events_read_, "event"));
  logger("traces")->warn("{}", warning_);
  return false;
}

bool TraceReader::read_record() {
  const std::uint64_t at = offset_;
  std::array<char, format::kChunkHeaderBytes> h{};
  const std::size_t marker_bytes = read_up_to(h.data(), 4);
  if (marker_bytes == 0) return cut_short(at, "where the next chunk or the footer should start");
  if (marker_bytes < 4) return cut_short(at, "inside a record marker");
  if (same_bytes(h.data(), format::kFooterMarker)) return read_footer(at);

  chunk_index_ = chunks_read_;
  chunk_offset_ = at;
  context_.set_position(static_cast<std::int64_t>(chunk_index_));
  const auto record = static_cast<std::int64_t>(chunk_index_);
  const std::string name = fmt::format("chunk {} (byte offset {})", chunk_index_, at);
  if (!same_bytes(h.data(), format::kChunkMarker)) {
    fail(record, fmt::format("{}: bad record marker {} (a chunk starts with \"CHNK\", the footer "
                             "with \"FOOT\")",
                             name, hex_bytes(h.data(), 4)));
  }
  if (read_up_to(h.data() + 4, h.size() - 4) < h.size() - 4) {
    return cut_short(at, fmt::format("inside the header of chunk {}", chunk_index_));
  }
  const std::uint32_t stored_header_crc = format::load_u32_le(h.data() + 20);
  const std::uint32_t header_crc = crc32c_extend(0, h.data(), 20);
  if (stored_header_crc != header_crc) {
    fail(record, fmt::format("{}: CRC-32C mismatch in the chunk header (stored {}, computed {})",
                             name, hex32(stored_header_crc), hex32(header_crc)));
  }
  const std::uint32_t compressed = format::load_u32_le(h.data() + 4);
  const std::uint32_t uncompressed = format::load_u32_le(h.data() + 8);
  const std::uint32_t events = format::load_u32_le(h.data() + 12);
  const std::uint32_t data_crc = format::load_u32_le(h.data() + 16);
  if (compressed == 0 || compressed > format::kMaxChunkCompressedBytes) {
    fail(record, fmt::format("{}: compressed_length {} is out of range (1..{})", name, compressed,
                             format::kMaxChunkCompressedBytes));
  }
  if (uncompressed > format::kMaxChunkUncompressedBytes) {
    fail(record, fmt::format("{}: uncompressed_length {} exceeds the limit of {}", name,
                             uncompressed, format::kMaxChunkUncompressedBytes));
  }
  if (events == 0 || events > uncompressed / 2) {
    fail(record, fmt::format("{}: event_count {} is impossible for {} uncompressed bytes", name,
                             events, uncompressed));
  }
  // The header's CRC holds, so data missing past the end means a cut, not a
  // corrupt length; checking before resizing bounds the allocation.
  if (compressed > file_size_ - std::min(file_size_, offset_)) {
    return cut_short(at, fmt::format("inside the data of chunk {}", chunk_index_));
  }
  compressed_.resize(compressed);
  if (read_up_to(compressed_.data(), compressed) < compressed) {
    return cut_short(at, fmt::format("inside the data of chunk {}", chunk_index_));
  }
  const std::uint32_t computed_crc = crc32c(compressed_);
  if (computed_crc != data_crc) {
    fail(record, fmt::format("{}: CRC-32C mismatch in its {} compressed bytes (stored {}, "
                             "computed {})",
                             name, compressed, hex32(data_crc), hex32(computed_crc)));
  }
  const unsigned long long content = ZSTD_getFrameContentSize(compressed_.data(), compressed);
  if (content == ZSTD_CONTENTSIZE_ERROR) fail(record, name + ": the data is not a zstd frame");
  if (content != uncompressed) {
    fail(record,
         fmt::format("{}: the zstd frame {}, the chunk header says {} bytes", name,
                     content == ZSTD_CONTENTSIZE_UNKNOWN ? std::string("does not record its size")
                                                         : fmt::format("holds {} bytes", content),
                     uncompressed));
  }
  const std::size_t frame = ZSTD_findFrameCompressedSize(compressed_.data(), compressed);
  if (ZSTD_isError(frame) != 0u || frame != compressed) {
    fail(record,
         fmt::format("{}: the zstd frame does not fill the {} compressed bytes", name, compressed));
  }
  chunk_.resize(uncompressed);
  const std::size_t got = ZSTD_decompressDCtx(decompressor_->dctx.get(), chunk_.data(),
                                              chunk_.size(), compressed_.data(), compressed);
  if (ZSTD_isError(got) != 0u || got != uncompressed) {
    fail(record, fmt::format("{}: zstd cannot decompress it: {}", name,
                             ZSTD_isError(got) != 0u ? ZSTD_getErrorName(got) : "short output"));
  }
  chunk_pos_ = 0;
  chunk_events_ = events;
  chunk_events_seen_ = 0;
  ++chunks_read_;
  return true;
}

void TraceReader::parse_event(v1::Event& event) {
  const auto record = static_cast<std::int64_t>(chunk_index_);
  auto bad = [&](const std::string& what) {
    fail(record, fmt::format("chunk {} (byte offset {}): event {} at byte {} of its {} "
                             "decompressed bytes: {}",
                             chunk_index_, chunk_offset_, chunk_events_seen_, chunk_pos_,
                             chunk_.size(), what));
  };
  if (chunk_events_seen_ == chunk_events_) {
    bad(fmt::format("more events than the chunk header's event_count {}", chunk_events_));
  }
  const auto* p = reinterpret_cast<const unsigned char*>(chunk_.data());
  const std::size_t end = chunk_.size();
  std::size_t pos = chunk_pos_;
  if (p[pos] != format::kEventTag) {
    bad(fmt::format("expected the event tag 0x0a, found {:#04x}", p[pos]));
  }
  ++pos;
  std::uint32_t length = 0;
  for (int shift = 0;; shift += 7) {  // a varint of at most 5 bytes, at most 2^32 - 1
    if (pos >= end) bad("the event's length runs past the end of the chunk");
    const unsigned char b = p[pos++];
    if (shift == 28 && b > 0x0F) bad("the event's length is not a valid 32-bit varint");
    length |= static_cast<std::uint32_t>(b & 0x7Fu) << shift;
    if ((b & 0x80u) == 0) break;
  }
  if (length > end - pos) {
    bad(fmt::format("the event's length {} runs past the end of the chunk ({} bytes left)", length,
                    end - pos));
  }
  if (!event.ParseFromArray(p + pos, static_cast<int>(length))) {
    bad(fmt::format("its {} bytes are not a valid Event", length));
  }
  if (auto broken = check_event(event, metadata_.world_size())) {
    throw InputError(InputLocation{file_, std::nullopt, record, broken->field},
                     fmt::format("chunk {} (byte offset {}): event {} (event {} of the file): {}",
                                 chunk_index_, chunk_offset_, chunk_events_seen_, events_read_,
                                 broken->what));
  }
  chunk_pos_ = pos + length;
  ++chunk_events_seen_;
  ++events_read_;
  if (chunk_pos_ == end && chunk_events_seen_ != chunk_events_) {
    fail(record,
         fmt::format("chunk {} (byte offset {}): it holds {} but its header says {}", chunk_index_,
                     chunk_offset_, plural(chunk_events_seen_, "event"), chunk_events_));
  }
}

bool TraceReader::read_footer(std::uint64_t at) {
  const auto record = static_cast<std::int64_t>(chunks_read_);
  const std::string name = fmt::format("footer (byte offset {})", at);
  std::array<char, format::kFooterFixedBytes> fixed{};
  std::memcpy(fixed.data(), format::kFooterMarker.data(), 4);
  if (read_up_to(fixed.data() + 4, 8) < 8) return cut_short(at, "inside the footer");
  // The length has a CRC of its own, so that a corrupt length is not
  // mistaken for a file cut short.
  const std::uint32_t stored_length_crc = format::load_u32_le(fixed.data() + 8);
  const std::uint32_t length_crc = crc32c_extend(0, fixed.data(), 8);
  if (stored_length_crc != length_crc) {
    fail(record, fmt::format("{}: CRC-32C mismatch in the footer's length (stored {}, computed {})",
                             name, hex32(stored_length_crc), hex32(length_crc)));
  }
  const std::uint32_t length = format::load_u32_le(fixed.data() + 4);
  if (length > format::kMaxFooterBytes) {
    fail(record, fmt::format("{}: footer_length {} exceeds the limit of {}", name, length,
                             format::kMaxFooterBytes));
  }
  const std::size_t rest = std::size_t{length} + format::kCrcBytes + format::kEndMagic.size();
  if (rest > file_size_ - std::min(file_size_, offset_)) return cut_short(at, "inside the footer");
  std::string buf(rest, '\0');
  if (read_up_to(buf.data(), rest) < rest) return cut_short(at, "inside the footer");

  const std::uint32_t stored = format::load_u32_le(buf.data() + length);
  const std::uint32_t computed = crc32c_extend(0, buf.data(), length);
  if (stored != computed) {
    fail(record, fmt::format("{}: CRC-32C mismatch in its {} bytes (stored {}, computed {})", name,
                             length, hex32(stored), hex32(computed)));
  }
  v1::Footer footer;
  if (!footer.ParseFromArray(buf.data(), static_cast<int>(length))) {
    fail(record, name + ": not a valid Footer");
  }
  if (!same_bytes(buf.data() + length + format::kCrcBytes, format::kEndMagic)) {
    fail(record, fmt::format("{}: bad end magic {}", name,
                             hex_bytes(buf.data() + length + format::kCrcBytes, 8)));
  }
  if (offset_ < file_size_ || in_.peek() != std::ifstream::traits_type::eof()) {
    fail(record, fmt::format("{}: {} bytes follow the end magic at byte offset {}", name,
                             file_size_ > offset_ ? file_size_ - offset_ : 1, offset_));
  }
  if (footer.chunk_count() != chunks_read_ || footer.event_count() != events_read_) {
    fail(record,
         fmt::format("{}: it counts {} and {}, the file holds {} and {}", name,
                     plural(footer.chunk_count(), "chunk"), plural(footer.event_count(), "event"),
                     plural(chunks_read_, "chunk"), plural(events_read_, "event")));
  }
  footer_ = std::move(footer);
  at_end_ = true;
  return false;
}

InputError truncated_trace_error(const TraceReader& reader, const std::string& advice) {
  std::string why = reader.truncation_warning();
  const std::string prefix = reader.file_name() + ": ";
  if (why.rfind(prefix, 0) == 0) why.erase(0, prefix.size());
  return InputError({reader.file_name(), std::nullopt,
                     static_cast<std::int64_t>(reader.chunks_read()), ""},
                    why + advice);
}

}  // namespace ssgd::trace
