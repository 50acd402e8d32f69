#include "common/gzip_stream.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <ostream>
#include <stdexcept>
#include <system_error>

#include "common/error.h"
#include "common/input_file.h"

namespace ssgd {
namespace {

constexpr std::size_t kBlock = 1 << 18;  // 256 KiB of file read at a time

[[noreturn]] void fail(const std::filesystem::path& path, std::uint64_t offset,
                       const std::string& why) {
  InputLocation where{path.string(), std::nullopt, std::nullopt, ""};
  throw InputError(where, "gzip stream damaged near compressed byte " + std::to_string(offset) +
                              ": " + why);
}

}  // namespace

struct GzipReader::Inflater {
  z_stream z{};
  bool initialised = false;
  ~Inflater() {
    if (initialised) inflateEnd(&z);
  }
};

GzipReader::GzipReader(const std::filesystem::path& path)
    : path_(path), in_buffer_(kBlock), inflater_(std::make_unique<Inflater>()) {
  std::error_code ec;
  require_regular_file(path, "");  // a FIFO would block, a device never end
  in_.open(path, std::ios::binary);
  if (!in_) {
    throw InputError({path.string(), std::nullopt, std::nullopt, ""},
                     "cannot open: " + std::string(std::strerror(errno)));
  }
  const auto size = std::filesystem::file_size(path, ec);
  file_size_ = ec ? 0 : size;
  // Recognise gzip by its magic (1f 8b), not by the name.
  char magic[2] = {0, 0};
  in_.read(magic, 2);
  const auto got = static_cast<std::size_t>(in_.gcount());
  compressed_ = got == 2 && static_cast<unsigned char>(magic[0]) == 0x1f &&
                static_cast<unsigned char>(magic[1]) == 0x8b;
  in_.clear();
  in_.seekg(0);
  if (compressed_) {
    // 16 + MAX_WBITS: a gzip wrapper is required (no raw deflate, no zlib).
    if (inflateInit2(&inflater_->z, 16 + MAX_WBITS) != Z_OK) {
      throw std::runtime_error("zlib: inflateInit2 failed");
    }
    inflater_->initialised = true;
  }
}

GzipReader::~GzipReader() = default;

bool GzipReader::refill() {
  if (input_done_) return false;
  in_.read(in_buffer_.data(), static_cast<std::streamsize>(in_buffer_.size()));
  const auto got = static_cast<std::size_t>(in_.gcount());
  if (in_.bad()) {
    throw InputError({path_.string(), std::nullopt, std::nullopt, ""},
                     "read error after " + std::to_string(file_bytes_read_) + " bytes");
  }
  file_bytes_read_ += got;
  if (got < in_buffer_.size()) input_done_ = true;
  if (compressed_) {
    inflater_->z.next_in = reinterpret_cast<Bytef*>(in_buffer_.data());
    inflater_->z.avail_in = static_cast<uInt>(got);
  } else {
    plain_pos_ = 0;
    plain_size_ = got;
  }
  return got > 0;
}

std::size_t GzipReader::read(char* out, std::size_t size) {
  if (size == 0) return 0;
  if (!compressed_) {
    if (plain_pos_ == plain_size_ && !refill()) return 0;
    const std::size_t n = std::min(size, plain_size_ - plain_pos_);
    std::memcpy(out, in_buffer_.data() + plain_pos_, n);
    plain_pos_ += n;
    return n;
  }
  z_stream& z = inflater_->z;
  z.next_out = reinterpret_cast<Bytef*>(out);
  z.avail_out = static_cast<uInt>(std::min<std::size_t>(size, 1u << 30));
  const uInt wanted = z.avail_out;
  while (z.avail_out == wanted) {
    if (z.avail_in == 0) {
      if (!refill()) {
        // End of file: fine only between members.
        if (member_done_ || file_bytes_read_ == 0) return 0;
        fail(path_, file_bytes_read_, "the file ends inside a gzip member (truncated)");
      }
    }
    if (member_done_) {
      // Another member follows (concatenated gzip files).
      if (inflateReset(&z) != Z_OK) fail(path_, file_bytes_read_ - z.avail_in, "inflateReset");
      member_done_ = false;
    }
    const int rc = inflate(&z, Z_NO_FLUSH);
    if (rc == Z_STREAM_END) {
      member_done_ = true;
    } else if (rc == Z_BUF_ERROR) {
      continue;  // needs more input
    } else if (rc != Z_OK) {
      fail(path_, file_bytes_read_ - z.avail_in, z.msg != nullptr ? z.msg : "inflate error");
    }
    if (member_done_ && z.avail_in == 0 && input_done_) break;
  }
  const std::size_t got = wanted - z.avail_out;
  bytes_out_ += got;
  // Against what inflate has consumed, not the blocks read ahead of it.
  const std::uint64_t consumed = file_bytes_read_ - z.avail_in;
  if (bytes_out_ > kGzipFreeBytes && bytes_out_ / kGzipMaxExpansion > consumed) {
    throw InputError(
        {path_.string(), std::nullopt, std::nullopt, ""},
        "the gzip stream expands more than " + std::to_string(kGzipMaxExpansion) +
            " times (" + std::to_string(bytes_out_) + " bytes from the first " +
            std::to_string(consumed) +
            " of the file): refused as a decompression bomb; if it is a real input, "
            "decompress it (gunzip) and give the plain file");
  }
  return got;
}

bool has_gzip_extension(const std::filesystem::path& path) { return path.extension() == ".gz"; }

struct GzipWriter::Deflater {
  z_stream z{};
  bool initialised = false;
  ~Deflater() {
    if (initialised) deflateEnd(&z);
  }
};

GzipWriter::GzipWriter(std::ostream& out, int level)
    : out_(out), deflater_(std::make_unique<Deflater>()), out_buffer_(kBlock) {
  if (level < 1 || level > 9) throw std::invalid_argument("gzip level must be 1..9");
  if (deflateInit2(&deflater_->z, level, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) !=
      Z_OK) {
    throw std::runtime_error("zlib: deflateInit2 failed");
  }
  deflater_->initialised = true;
}

GzipWriter::~GzipWriter() = default;

void GzipWriter::deflate_some(int flush) {
  z_stream& z = deflater_->z;
  int rc = Z_OK;
  do {
    z.next_out = reinterpret_cast<Bytef*>(out_buffer_.data());
    z.avail_out = static_cast<uInt>(out_buffer_.size());
    rc = deflate(&z, flush);
    if (rc == Z_STREAM_ERROR) throw std::runtime_error("zlib: deflate failed");
    out_.write(out_buffer_.data(), static_cast<std::streamsize>(out_buffer_.size() - z.avail_out));
  } while (z.avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
  if (!out_) throw std::runtime_error("gzip output: write failed");
}

void GzipWriter::write(std::string_view bytes) {
  if (finished_) throw std::logic_error("GzipWriter::write after finish");
  z_stream& z = deflater_->z;
  bytes_in_ += bytes.size();
  while (!bytes.empty()) {
    const auto n = static_cast<uInt>(std::min<std::size_t>(bytes.size(), 1u << 30));
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
    z.avail_in = n;
    deflate_some(Z_NO_FLUSH);
    bytes.remove_prefix(n);
  }
}

void GzipWriter::finish() {
  if (finished_) return;
  finished_ = true;
  deflater_->z.next_in = nullptr;
  deflater_->z.avail_in = 0;
  deflate_some(Z_FINISH);
  out_.flush();
  if (!out_) throw std::runtime_error("gzip output: write failed");
}

}  // namespace ssgd
