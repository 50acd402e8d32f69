#include "traces/import/pytorch/kineto_json_reader.h"

#include <charconv>
#include <chrono>
#include <exception>
#include <istream>
#include <limits>
#include <streambuf>

#include "common/error.h"
#include "common/gzip_stream.h"
#include "common/work_context.h"

namespace ssgd::trace {
namespace {

using json = nlohmann::json;

constexpr std::size_t kBlockBytes = std::size_t{1} << 20;
// A top-level value other than traceEvents (device properties, distributed
// info, the profiler's warnings) is small; more than this many JSON values
// in one means the file is not what we think it is.
constexpr std::uint64_t kMaxTopLevelValues = 1'000'000;
constexpr std::size_t kMaxNesting = 64;

// GzipReader as a streambuf for nlohmann's stream adapter. An InputError
// from GzipReader (damaged or truncated gzip) must not unwind through the
// parser: it is kept and the stream ends; the SAX handler rethrows it with
// the event index.
class GzipStreamBuf : public std::streambuf {
 public:
  explicit GzipStreamBuf(GzipReader& reader) : reader_(reader), buffer_(kBlockBytes) {}

  // Bytes handed to the parser so far.
  [[nodiscard]] std::uint64_t position() const {
    return before_ + static_cast<std::uint64_t>(gptr() - eback());
  }
  [[nodiscard]] bool at_end() const { return at_end_; }
  [[nodiscard]] std::exception_ptr error() const { return error_; }

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    if (at_end_) return traits_type::eof();
    before_ += static_cast<std::uint64_t>(egptr() - eback());
    std::size_t n = 0;
    try {
      n = reader_.read(buffer_.data(), buffer_.size());
    } catch (...) {
      error_ = std::current_exception();
    }
    if (n == 0) {
      at_end_ = true;
      setg(buffer_.data(), buffer_.data(), buffer_.data());
      return traits_type::eof();
    }
    setg(buffer_.data(), buffer_.data(), buffer_.data() + n);
    return traits_type::to_int_type(*gptr());
  }

 private:
  GzipReader& reader_;
  std::vector<char> buffer_;
  std::uint64_t before_ = 0;
  bool at_end_ = false;
  std::exception_ptr error_;
};

// What the container at one nesting level is.
enum class Frame { kTop, kCapture, kEvents, kEvent, kArgs, kArgArray, kArgInnerArray, kSkip };

class KinetoSax {
 public:
  KinetoSax(const std::string& file, const KinetoReaderOptions& options, GzipReader& reader,
            GzipStreamBuf& buf, KinetoReadResult& result)
      : file_(file), options_(options), reader_(reader), buf_(buf), result_(result),
        last_progress_(std::chrono::steady_clock::now()) {}

  bool null() { return scalar(KinetoValue::Type::kNull, "null"); }
  bool boolean(bool v) { return scalar(KinetoValue::Type::kBool, v ? "true" : "false"); }
  bool number_integer(json::number_integer_t v) {
    return scalar(KinetoValue::Type::kInteger, std::to_string(v));
  }
  bool number_unsigned(json::number_unsigned_t v) {
    return scalar(KinetoValue::Type::kInteger, std::to_string(v));
  }
  bool number_float(json::number_float_t, const std::string& raw) {
    return scalar(KinetoValue::Type::kNumber, raw);
  }
  bool string(std::string& v) { return scalar(KinetoValue::Type::kString, v); }
  bool binary(json::binary_t&) { return true; }

  bool start_object(std::size_t) { return open(false); }
  bool start_array(std::size_t) { return open(true); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }

  bool key(std::string& k) {
    if (skip_ > 0) return true;
    switch (frames_.back()) {
      case Frame::kTop: top_key_ = k; break;
      case Frame::kCapture: capture_slot_ = &(*capture_.back())[k]; break;
      case Frame::kEvent: field_ = field_for(k); break;
      case Frame::kArgs: {
        auto& ev = event_;
        if (ev.arg_count == ev.args.size()) ev.args.emplace_back();
        auto& slot = ev.args[ev.arg_count++];
        slot.first = k;
        slot.second.clear();
        arg_ = &slot.second;
        break;
      }
      default: break;
    }
    return true;
  }

  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& ex) {
    const std::optional<std::int64_t> record =
        in_event_ ? std::optional<std::int64_t>(static_cast<std::int64_t>(event_.index))
                  : std::nullopt;
    const std::string where =
        in_event_ ? " inside event " + std::to_string(event_.index) + " of traceEvents"
                  : (frames_.empty() ? std::string(" before the top-level value")
                                     : " after " + std::to_string(result_.events) +
                                           " whole events");
    if (auto err = buf_.error()) {
      try {
        std::rethrow_exception(err);
      } catch (const InputError& e) {
        throw InputError({file_, std::nullopt, record, e.where().field},
                         e.reason() + where);
      }
    }
    if (buf_.at_end() && frames_.empty()) {
      throw InputError({file_, std::nullopt, std::nullopt, ""},
                       "no JSON value: the file is empty or holds only whitespace (" +
                           std::to_string(buf_.position()) + " bytes" +
                           (reader_.compressed() ? " uncompressed" : "") + ")");
    }
    if (buf_.at_end()) {
      throw InputError({file_, std::nullopt, record, ""},
                       "the file is truncated: its JSON stops at byte " +
                           std::to_string(buf_.position()) +
                           (reader_.compressed() ? " (uncompressed)" : "") + where +
                           " (" + std::to_string(result_.events) + " events read)");
    }
    std::string what = ex.what();
    if (auto colon = what.rfind("error: "); colon != std::string::npos) what = what.substr(colon + 7);
    throw InputError({file_, std::nullopt, record, ""},
                     "invalid JSON at byte " + std::to_string(position) + where + ": " + what);
  }

 private:
  KinetoValue* field_for(const std::string& k) {
    if (k == "ph") return &event_.ph;
    if (k == "cat") return &event_.cat;
    if (k == "name") return &event_.name;
    if (k == "ts") return &event_.ts;
    if (k == "dur") return &event_.dur;
    if (k == "pid") return &event_.pid;
    if (k == "tid") return &event_.tid;
    if (k == "id") return &event_.id;
    if (k == "args") return &args_marker_;
    return nullptr;
  }

  bool scalar(KinetoValue::Type type, const std::string& text) {
    if (skip_ > 0) return true;
    switch (frames_.empty() ? Frame::kSkip : frames_.back()) {
      case Frame::kTop:
        result_.top_level[top_key_] = to_json(type, text);
        break;
      case Frame::kCapture: {
        count_capture();
        json v = to_json(type, text);
        if (capture_.back()->is_array()) {
          capture_.back()->push_back(std::move(v));
        } else {
          *capture_slot_ = std::move(v);
        }
        break;
      }
      case Frame::kEvent:
        if (field_ != nullptr && field_ != &args_marker_) {
          field_->type = type;
          field_->text = text;
        }
        break;
      case Frame::kArgs:
        if (arg_ != nullptr) {
          arg_->type = type;
          arg_->text = text;
        }
        break;
      case Frame::kArgArray:
      case Frame::kArgInnerArray: {
        using T = KinetoValue::Type;
        const bool inner = frames_.back() == Frame::kArgInnerArray;
        if (arg_->type == T::kOther) break;
        if (!inner && type == T::kString &&
            (arg_->type == T::kStringArray || (arg_->type == T::kIntArray && arg_->ints.empty()))) {
          arg_->type = T::kStringArray;
          arg_->strings.push_back(text);
          break;
        }
        std::int64_t v = 0;
        const char* b = text.data();
        const char* e = b + text.size();
        auto [p, ec] = std::from_chars(b, e, v);
        const bool fits = inner ? arg_->type == T::kIntArrays : arg_->type == T::kIntArray;
        if (fits && type == T::kInteger && ec == std::errc() && p == e) {
          arg_->ints.push_back(v);
          if (inner) ++arg_->lengths.back();
        } else {
          arg_->type = T::kOther;
        }
        break;
      }
      default:
        break;  // a scalar top-level value, or inside traceEvents but not in an event
    }
    return true;
  }

  static json to_json(KinetoValue::Type type, const std::string& text) {
    switch (type) {
      case KinetoValue::Type::kNull: return nullptr;
      case KinetoValue::Type::kBool: return text == "true";
      case KinetoValue::Type::kString: return text;
      default: {
        // Numbers: integers exactly, others as parsed by nlohmann.
        return json::parse(text, nullptr, false);
      }
    }
  }

  void count_capture() {
    if (++captured_values_ > kMaxTopLevelValues) {
      throw InputError({file_, std::nullopt, std::nullopt, top_key_},
                       "top-level key '" + top_key_ + "' holds more than " +
                           std::to_string(kMaxTopLevelValues) +
                           " values; this does not look like a Kineto trace");
    }
  }

  bool open(bool array) {
    if (skip_ > 0) {
      ++skip_;
      return true;
    }
    if (frames_.size() >= kMaxNesting) {
      // The parser has just taken the '[' or '{' that opens the level: its
      // offset (0-based, in the uncompressed text) is one before the position.
      throw InputError({file_, std::nullopt, std::nullopt, ""},
                       "JSON nested deeper than " + std::to_string(kMaxNesting) +
                           " levels (at byte " + std::to_string(buf_.position() - 1) + ")");
    }
    if (frames_.empty()) {
      if (array) {
        result_.top_level_array = true;
        begin_events();
      } else {
        frames_.push_back(Frame::kTop);
      }
      return true;
    }
    switch (frames_.back()) {
      case Frame::kTop:
        if (array && top_key_ == "traceEvents") {
          begin_events();
        } else {
          captured_values_ = 0;
          json& slot = result_.top_level[top_key_];
          slot = array ? json::array() : json::object();
          capture_.assign(1, &slot);
          frames_.push_back(Frame::kCapture);
        }
        return true;
      case Frame::kCapture: {
        count_capture();
        json child = array ? json::array() : json::object();
        json* parent = capture_.back();
        json* slot = nullptr;
        if (parent->is_array()) {
          parent->push_back(std::move(child));
          slot = &parent->back();
        } else {
          *capture_slot_ = std::move(child);
          slot = capture_slot_;
        }
        capture_.push_back(slot);
        frames_.push_back(Frame::kCapture);
        return true;
      }
      case Frame::kEvents:
        if (!array) {
          event_.clear();
          event_.index = result_.events;
          context_.set_position(static_cast<std::int64_t>(event_.index));
          in_event_ = true;
          frames_.push_back(Frame::kEvent);
        } else {
          ++skip_;
        }
        return true;
      case Frame::kEvent:
        if (!array && field_ == &args_marker_) {
          frames_.push_back(Frame::kArgs);
          arg_ = nullptr;
        } else {
          if (field_ != nullptr && field_ != &args_marker_) field_->type = KinetoValue::Type::kOther;
          ++skip_;
        }
        return true;
      case Frame::kArgs:
        if (array && arg_ != nullptr) {
          arg_->type = KinetoValue::Type::kIntArray;
          arg_->ints.clear();
          frames_.push_back(Frame::kArgArray);
        } else {
          if (arg_ != nullptr) arg_->type = KinetoValue::Type::kOther;
          ++skip_;
        }
        return true;
      case Frame::kArgArray:
        // An array of int arrays ("Input Dims"); anything deeper is kOther.
        if (!array || !(arg_->type == KinetoValue::Type::kIntArrays ||
                        (arg_->type == KinetoValue::Type::kIntArray && arg_->ints.empty()))) {
          arg_->type = KinetoValue::Type::kOther;
          ++skip_;
          return true;
        }
        arg_->type = KinetoValue::Type::kIntArrays;
        arg_->lengths.push_back(0);
        frames_.push_back(Frame::kArgInnerArray);
        return true;
      case Frame::kArgInnerArray:
        arg_->type = KinetoValue::Type::kOther;
        ++skip_;
        return true;
      default:
        ++skip_;
        return true;
    }
  }

  void begin_events() {
    result_.had_trace_events = true;
    frames_.push_back(Frame::kEvents);
  }

  bool close() {
    if (skip_ > 0) {
      --skip_;
      return true;
    }
    const Frame f = frames_.back();
    frames_.pop_back();
    if (f == Frame::kCapture) {
      capture_.pop_back();
    } else if (f == Frame::kEvent) {
      in_event_ = false;
      if (options_.on_event) options_.on_event(event_);
      ++result_.events;
      if ((result_.events & 0xFFF) == 0) progress();
    }
    return true;
  }

  void progress() {
    if (!options_.on_progress) return;
    const auto now = std::chrono::steady_clock::now();
    if (std::chrono::duration<double>(now - last_progress_).count() < options_.progress_seconds) {
      return;
    }
    last_progress_ = now;
    options_.on_progress({reader_.file_bytes_read(), reader_.file_size(), result_.events});
  }

  const std::string& file_;
  const KinetoReaderOptions& options_;
  GzipReader& reader_;
  GzipStreamBuf& buf_;
  KinetoReadResult& result_;
  WorkContext context_{"reading", file_, "profiler trace JSON", "record"};

  std::vector<Frame> frames_;
  std::size_t skip_ = 0;  // nesting depth inside a value that is skipped
  std::string top_key_;
  std::vector<json*> capture_;
  json* capture_slot_ = nullptr;
  std::uint64_t captured_values_ = 0;
  KinetoEvent event_;
  bool in_event_ = false;
  KinetoValue* field_ = nullptr;
  KinetoValue args_marker_;  // field_ points here while the key is "args"
  KinetoValue* arg_ = nullptr;
  std::chrono::steady_clock::time_point last_progress_;
};

}  // namespace

std::optional<std::int64_t> KinetoValue::as_int() const {
  if (!is_number()) return std::nullopt;
  std::int64_t v = 0;
  const char* b = text.data();
  const char* e = b + text.size();
  auto [p, ec] = std::from_chars(b, e, v);
  if (ec == std::errc() && p == e) return v;
  // "3.0" and "3e2" are integers too; "3.5" is not.
  auto ns = parse_microseconds_ns(text);
  if (!ns || *ns % 1000 != 0) return std::nullopt;
  return *ns / 1000;
}

void KinetoValue::clear() {
  type = Type::kMissing;
  text.clear();
  ints.clear();
  lengths.clear();
  strings.clear();
}

const KinetoValue& KinetoEvent::arg(std::string_view key) const {
  static const KinetoValue kMissing;
  for (std::size_t i = 0; i < arg_count; ++i) {
    if (args[i].first == key) return args[i].second;
  }
  return kMissing;
}

void KinetoEvent::clear() {
  for (KinetoValue* v : {&ph, &cat, &name, &ts, &dur, &pid, &tid, &id}) v->clear();
  arg_count = 0;
}

std::optional<std::int64_t> parse_microseconds_ns(std::string_view text) {
  // sign, integer digits, optional fraction, optional exponent; then the
  // decimal point is moved by (exponent + 3) places to count nanoseconds.
  std::size_t i = 0;
  bool negative = false;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) negative = text[i++] == '-';
  std::string digits;
  std::int64_t point = 0;  // digits before the decimal point
  bool any = false;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i, any = true) digits += text[i];
  point = static_cast<std::int64_t>(digits.size());
  if (i < text.size() && text[i] == '.') {
    for (++i; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i, any = true) {
      digits += text[i];
    }
  }
  if (!any) return std::nullopt;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    std::int64_t exp = 0;
    const char* b = text.data() + i;
    const char* e = text.data() + text.size();
    if (b < e && *b == '+') ++b;
    auto [p, ec] = std::from_chars(b, e, exp);
    if (ec != std::errc() || p != e || exp > 40 || exp < -40) return std::nullopt;
    point += exp;
    i = text.size();
  }
  if (i != text.size()) return std::nullopt;
  point += 3;  // microseconds -> nanoseconds
  std::int64_t v = 0;
  for (std::int64_t d = 0; d < point; ++d) {
    const int digit = d < static_cast<std::int64_t>(digits.size()) ? digits[d] - '0' : 0;
    if (v > (std::numeric_limits<std::int64_t>::max() - digit) / 10) return std::nullopt;
    v = v * 10 + digit;
  }
  return negative ? -v : v;
}

KinetoReadResult read_kineto_json(const std::filesystem::path& path,
                                  const KinetoReaderOptions& options) {
  GzipReader reader(path);
  GzipStreamBuf buf(reader);
  std::istream in(&buf);
  KinetoReadResult result;
  const std::string file = path.string();
  KinetoSax sax(file, options, reader, buf, result);
  json::sax_parse(in, &sax);
  if (auto err = buf.error()) std::rethrow_exception(err);
  if (!result.had_trace_events) {
    throw InputError({file, std::nullopt, std::nullopt, "traceEvents"},
                     "no traceEvents array: this is not a Kineto / Chrome trace");
  }
  result.file_size = reader.file_size();
  result.uncompressed_bytes = buf.position();
  result.compressed = reader.compressed();
  return result;
}

}  // namespace ssgd::trace
