#pragma once
// Streaming gzip, both ways, for the Chrome-trace JSON that PyTorch's
// profiler writes (`.json.gz`) and that `ssgd export` writes.
//
// GzipReader reads a file that is either gzip (RFC 1952, several members
// allowed, as `cat a.gz b.gz` makes) or plain, recognised by the magic
// bytes, and hands out the uncompressed bytes a block at a time, so a file
// of any size is read in constant memory. A damaged or truncated gzip stream
// throws ssgd::InputError naming the file and the compressed byte offset.
//
// Decompression is bounded: past kGzipFreeBytes of output, a stream that
// has given more than kGzipMaxExpansion bytes for each byte of the file read
// so far is refused (InputError naming the file, both counts and the limit).
// Real traces compress 5 to 50 times; a "gzip bomb" (deflate can expand up
// to 1032 times: 49 KB of gzip makes 50 MB of zeros) would otherwise cost a
// reader that keeps what it reads about 1000 times its memory per byte.
//
// GzipWriter compresses to an std::ostream (an AtomicFile's stream, so a
// failed run leaves no half-written output); finish() writes the trailer.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ssgd {

inline constexpr std::uint64_t kGzipFreeBytes = std::uint64_t{16} << 20;
inline constexpr std::uint64_t kGzipMaxExpansion = 256;

class GzipReader {
 public:
  // Opens `path`; throws InputError when it cannot be read.
  explicit GzipReader(const std::filesystem::path& path);
  ~GzipReader();
  GzipReader(const GzipReader&) = delete;
  GzipReader& operator=(const GzipReader&) = delete;

  // Fills `out` with up to `size` uncompressed bytes; returns how many were
  // written, 0 only at the end of the input.
  std::size_t read(char* out, std::size_t size);

  [[nodiscard]] bool compressed() const { return compressed_; }
  // Bytes of the file consumed so far (for progress output).
  [[nodiscard]] std::uint64_t file_bytes_read() const { return file_bytes_read_; }
  [[nodiscard]] std::uint64_t file_size() const { return file_size_; }
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  bool refill();
  std::filesystem::path path_;
  std::ifstream in_;
  std::vector<char> in_buffer_;
  struct Inflater;
  std::unique_ptr<Inflater> inflater_;
  bool compressed_ = false;
  bool input_done_ = false;
  bool member_done_ = false;
  std::uint64_t file_bytes_read_ = 0;
  std::uint64_t file_size_ = 0;
  std::uint64_t bytes_out_ = 0;  // uncompressed bytes handed out
  std::size_t plain_pos_ = 0;    // plain input: next unread byte of in_buffer_
  std::size_t plain_size_ = 0;   // plain input: bytes held in in_buffer_
};

// True when `path` names a gzip file by its extension (".gz").
bool has_gzip_extension(const std::filesystem::path& path);

class GzipWriter {
 public:
  // level: zlib's 1 (fast) .. 9 (small); 6 is zlib's default.
  explicit GzipWriter(std::ostream& out, int level = 6);
  ~GzipWriter();
  GzipWriter(const GzipWriter&) = delete;
  GzipWriter& operator=(const GzipWriter&) = delete;

  void write(std::string_view bytes);
  // Writes the remaining compressed bytes and the gzip trailer. Throws
  // std::runtime_error when the stream failed. Nothing may be written after.
  void finish();

  [[nodiscard]] std::uint64_t bytes_in() const { return bytes_in_; }

 private:
  void deflate_some(int flush);
  std::ostream& out_;
  struct Deflater;
  std::unique_ptr<Deflater> deflater_;
  std::vector<char> out_buffer_;
  std::uint64_t bytes_in_ = 0;
  bool finished_ = false;
};

}  // namespace ssgd
