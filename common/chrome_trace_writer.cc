#include "common/chrome_trace_writer.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <ostream>
#include <stdexcept>

#include "common/atomic_file.h"
#include "common/fixed_decimal.h"
#include "common/gzip_stream.h"
#include "common/utf8.h"

namespace ssgd {

std::string json_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  // JSON is UTF-8: a byte that does not start a well-formed sequence (a
  // file name from a non-UTF-8 file system) becomes U+FFFD, so the output
  // always parses.
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (static_cast<unsigned char>(c) >= 0x80) {
      const std::size_t len = utf8_sequence_length(s, i);
      if (len == 0) {
        out += "\xEF\xBF\xBD";
      } else {
        out.append(s.substr(i, len));
        i += len - 1;
      }
      continue;
    }
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", static_cast<int>(c));
    } else {
      out += c;
    }
  }
  return out;
}

std::string chrome_micros(std::int64_t ns) { return format_fixed_decimal(ns, 3); }

ChromeTraceWriter::ChromeTraceWriter(std::ostream& out, bool gzip) : out_(out) {
  if (gzip) gzip_ = std::make_unique<GzipWriter>(out_);
  write("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
}

ChromeTraceWriter::~ChromeTraceWriter() = default;

void ChromeTraceWriter::write(std::string_view bytes) {
  if (finished_) throw std::logic_error("ChromeTraceWriter: write after finish()");
  const bool good = static_cast<bool>(out_);
  if (good) errno = 0;
  if (gzip_) {
    gzip_->write(bytes);
  } else {
    out_.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  if (good && !out_) error_ = errno;  // why the first failed write failed, for finish()
}

void ChromeTraceWriter::event(std::string_view json_object) {
  if (events_ > 0) write(",\n");
  write(json_object);
  ++events_;
}

void ChromeTraceWriter::process_name(std::int64_t pid, std::string_view name) {
  event(fmt::format(R"({{"name":"process_name","ph":"M","pid":{},"args":{{"name":"{}"}}}})", pid,
                    json_escape(name)));
}

void ChromeTraceWriter::process_sort_index(std::int64_t pid, std::int64_t index) {
  event(fmt::format(R"({{"name":"process_sort_index","ph":"M","pid":{},"args":{{"sort_index":{}}}}})",
                    pid, index));
}

void ChromeTraceWriter::thread_name(std::int64_t pid, std::int64_t tid, std::string_view name) {
  event(fmt::format(R"({{"name":"thread_name","ph":"M","pid":{},"tid":{},"args":{{"name":"{}"}}}})",
                    pid, tid, json_escape(name)));
}

void ChromeTraceWriter::thread_sort_index(std::int64_t pid, std::int64_t tid, std::int64_t index) {
  event(fmt::format(
      R"({{"name":"thread_sort_index","ph":"M","pid":{},"tid":{},"args":{{"sort_index":{}}}}})", pid,
      tid, index));
}

void ChromeTraceWriter::slice(std::string_view name, std::string_view category, std::int64_t pid,
                              std::int64_t tid, std::int64_t start_ns, std::int64_t duration_ns,
                              std::string_view args) {
  std::string e = fmt::format(R"({{"name":"{}","cat":"{}","ph":"X","pid":{},"tid":{},"ts":{},"dur":{})",
                              json_escape(name), json_escape(category), pid, tid,
                              chrome_micros(start_ns), chrome_micros(duration_ns));
  if (!args.empty()) e += fmt::format(R"(,"args":{{{}}})", args);
  e += '}';
  event(e);
}

void ChromeTraceWriter::instant(std::string_view name, std::string_view category, std::int64_t pid,
                                std::int64_t tid, std::int64_t at_ns, std::string_view args) {
  std::string e = fmt::format(R"({{"name":"{}","cat":"{}","ph":"i","s":"t","pid":{},"tid":{},"ts":{})",
                              json_escape(name), json_escape(category), pid, tid,
                              chrome_micros(at_ns));
  if (!args.empty()) e += fmt::format(R"(,"args":{{{}}})", args);
  e += '}';
  event(e);
}

void ChromeTraceWriter::flow_start(std::uint64_t id, std::string_view name,
                                   std::string_view category, std::int64_t pid, std::int64_t tid,
                                   std::int64_t at_ns) {
  event(fmt::format(R"({{"name":"{}","cat":"{}","ph":"s","id":{},"pid":{},"tid":{},"ts":{}}})",
                    json_escape(name), json_escape(category), id, pid, tid, chrome_micros(at_ns)));
}

void ChromeTraceWriter::flow_end(std::uint64_t id, std::string_view name, std::string_view category,
                                 std::int64_t pid, std::int64_t tid, std::int64_t at_ns) {
  event(fmt::format(
      R"({{"name":"{}","cat":"{}","ph":"f","bp":"e","id":{},"pid":{},"tid":{},"ts":{}}})",
      json_escape(name), json_escape(category), id, pid, tid, chrome_micros(at_ns)));
}

void ChromeTraceWriter::finish() {
  write("\n]}\n");
  finished_ = true;
  if (gzip_) gzip_->finish();
  if (!out_) {
    if (error_ != 0) errno = error_;  // for callers that read it, as after any failed write
    throw std::runtime_error(std::string("writing the Chrome trace JSON failed") +
                             (error_ != 0 ? std::string(": ") + std::strerror(error_) : ""));
  }
}

ChromeTraceFile::ChromeTraceFile(const std::filesystem::path& path)
    : file_(std::make_unique<AtomicFile>(path, /*binary=*/true)),
      writer_(std::make_unique<ChromeTraceWriter>(file_->stream(), has_gzip_extension(path))) {}

ChromeTraceFile::~ChromeTraceFile() = default;

void ChromeTraceFile::commit() {
  writer_->finish();
  file_->commit();
}

}  // namespace ssgd
