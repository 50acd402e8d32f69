#include "traces/layer_profile.h"

#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <ostream>
#include <sstream>
#include <system_error>
#include <tuple>
#include <unordered_map>

#include "common/checked_math.h"
#include "common/error.h"
#include "common/text_file.h"
#include "common/utf8.h"
#include "common/work_context.h"
#include "traces/event_rules.h"

namespace ssgd::trace {
namespace {

constexpr std::string_view kHeaderHint =
    "layer,name,forward_ns,backward_ns,grad_bytes[,comm_ns][,unit][,activation_bytes]"
    "[,forward_split,backward_split]";
constexpr std::string_view kBom = "\xEF\xBB\xBF";

// Column positions in a header; kRequired lists the columns every profile has.
enum Column : std::size_t {
  kLayer, kName, kForward, kBackward, kGradBytes, kComm, kUnit, kActivation, kForwardSplit,
  kBackwardSplit, kColumnCount
};
constexpr std::array<std::string_view, kColumnCount> kColumnNames = {
    "layer", "name", "forward_ns", "backward_ns", "grad_bytes", "comm_ns", "unit",
    "activation_bytes", "forward_split", "backward_split"};
constexpr std::size_t kRequired = kComm;  // columns [0, kRequired) are required

std::string_view trim(std::string_view s) {
  const auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// Splits on ',' and trims every field; the CSV dialect has no quoting. At
// most kMaxSplitFields fields are split off, the last one holding the rest
// of the line: a header or row has at most kColumnCount columns, and a line
// of commas must not cost 16 bytes of memory per byte.
constexpr std::size_t kMaxSplitFields = 64;
std::vector<std::string_view> split_fields(std::string_view line) {
  std::vector<std::string_view> fields;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = line.find(',', start);
    if (comma == std::string_view::npos || fields.size() + 1 == kMaxSplitFields) {
      fields.push_back(trim(line.substr(start)));
      return fields;
    }
    fields.push_back(trim(line.substr(start, comma - start)));
    start = comma + 1;
  }
}

// Walks the text line by line, counting 1-based line numbers, with a leading
// UTF-8 byte-order mark and '\r' of CRLF endings removed.
class LineCursor {
 public:
  explicit LineCursor(std::string_view text) : rest_(text) {
    if (rest_.substr(0, kBom.size()) == kBom) rest_.remove_prefix(kBom.size());
  }
  bool next(std::string_view& line) {
    if (done_) return false;
    const std::size_t nl = rest_.find('\n');
    if (nl == std::string_view::npos) {
      line = rest_;
      done_ = true;
      if (line.empty()) return false;  // text ended with a newline
    } else {
      line = rest_.substr(0, nl);
      rest_.remove_prefix(nl + 1);
    }
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    ++number_;
    return true;
  }
  [[nodiscard]] std::int64_t number() const { return number_; }

 private:
  std::string_view rest_;
  std::int64_t number_ = 0;
  bool done_ = false;
};

// Built by appending: GCC 12 at -O3 warns falsely (-Wrestrict) on "'" + std::string(s).
std::string in_quotes(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out += '\'';
  out += s;
  out += '\'';
  return out;
}

class Parser {
 public:
  explicit Parser(const std::string& source) { profile_.source = source; }

  LayerProfile run(std::string_view text) {
    LineCursor cursor(text);
    std::string_view line;
    bool saw_anything = false;
    while (cursor.next(line)) {
      line_ = cursor.number();
      const std::string_view t = trim(line);
      if (t.empty()) continue;
      saw_anything = true;
      if (t.find('\r') != std::string_view::npos) {
        fail("", "a carriage return inside the line (lines end in LF or CRLF)");
      }
      if (t.front() == '#') {
        read_comment(t);
      } else if (!header_line_) {
        read_header(t);
      } else {
        read_row(t);
      }
    }
    if (!saw_anything || !header_line_) {
      // A file holding only comments is as unusable as an empty one.
      const std::string what = saw_anything ? "no header row, only comments" : "empty file";
      throw InputError({profile_.source, {}, {}, ""},
                       what + ": expected a header row '" + std::string(kHeaderHint) + "'");
    }
    if (profile_.layers.empty()) {
      throw InputError({profile_.source, header_line_, {}, ""},
                       "no layer rows after the header; a profile needs at least one layer");
    }
    if (profile_.update_split) {
      const std::int64_t split_line = metadata_lines_.at("update_split");
      if (!profile_.update) {
        throw InputError({profile_.source, split_line, {}, "update_split"},
                         "an update split without '# update_ns:', the time it splits");
      }
      if (profile_.update_split->total() != profile_.update->ns()) {
        throw InputError({profile_.source, split_line, {}, "update_split"},
                         "the rates add up to " + std::to_string(profile_.update_split->total()) +
                             " ns, not update_ns's " + std::to_string(profile_.update->ns()) + " ns");
      }
    }
    return std::move(profile_);
  }

 private:
  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    throw InputError({profile_.source, line_, {}, field}, what);
  }

  // "# key: value" for the four metadata keys; every other comment is ignored.
  void read_comment(std::string_view t) {
    t = trim(t.substr(1));
    const std::size_t colon = t.find(':');
    if (colon == std::string_view::npos) return;
    const std::string_view key = trim(t.substr(0, colon));
    const std::string_view value = trim(t.substr(colon + 1));
    if (key != "model" && key != "batch_per_gpu" && key != "provenance" && key != "update_ns" &&
        key != "grad_dtype" && key != "sharding" && key != "shard_group" &&
        key != "gradient_reduction" && key != "gpu" && key != "update_split" &&
        key != "micro_batches") {
      return;
    }
    if (auto [it, fresh] = metadata_lines_.emplace(std::string(key), line_); !fresh) {
      fail(std::string(key), "metadata given twice (first on line " + std::to_string(it->second) + ")");
    }
    if (std::string why = utf8_problem(value); !why.empty()) fail(std::string(key), "the value " + why);
    if (key == "model") {
      profile_.model = std::string(value);
    } else if (key == "provenance") {
      profile_.provenance = std::string(value);
    } else if (key == "update_ns") {
      profile_.update = parse_time(value, "update_ns");
    } else if (key == "gpu") {
      if (value.empty()) fail("gpu", "empty GPU name");
      profile_.gpu = std::string(value);
    } else if (key == "update_split") {
      profile_.update_split = parse_split(value, "update_split");
    } else if (key == "grad_dtype") {
      if (!dtype_size(value)) {
        fail("grad_dtype", "unknown dtype " + in_quotes(value) + " (expected fp32, bf16 or fp16)");
      }
      profile_.grad_dtype = std::string(value);
    } else if (key == "sharding") {
      if (!is_sharding_name(value)) {
        fail("sharding", "unknown strategy " + in_quotes(value) +
                             " (expected none, zero1, zero2, zero3 or hsdp)");
      }
      profile_.sharding = std::string(value);
    } else if (key == "shard_group") {
      const std::int64_t group = parse_int(value, "shard_group");
      if (group <= 0) fail("shard_group", "must be a positive integer, got " + std::to_string(group));
      profile_.shard_group = group;
    } else if (key == "micro_batches") {
      const std::int64_t k = parse_int(value, "micro_batches");
      if (k < 1 || k > kMaxMicroBatches) {
        fail("micro_batches",
             "must be 1 to " + std::to_string(kMaxMicroBatches) + ", got " + std::to_string(k));
      }
      profile_.micro_batches = k;
    } else if (key == "gradient_reduction") {
      if (!is_gradient_reduction_name(value)) {
        fail("gradient_reduction", "unknown reduction " + in_quotes(value) +
                                       " (expected reduce_scatter, reduce or all_reduce)");
      }
      profile_.gradient_reduction = std::string(value);
    } else {
      const std::int64_t batch = parse_int(value, "batch_per_gpu");
      if (batch <= 0) fail("batch_per_gpu", "must be a positive integer, got " + std::to_string(batch));
      profile_.batch_per_gpu = batch;
    }
  }

  void read_header(std::string_view t) {
    header_line_ = line_;
    const std::vector<std::string_view> names = split_fields(t);
    if (names.size() == kMaxSplitFields) {
      fail("", "the header has more than " + std::to_string(kMaxSplitFields - 1) +
                   " columns; expected '" + std::string(kHeaderHint) + "'");
    }
    std::string listed;
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (i > 0) listed += ',';
      listed += names[i];
    }
    const auto column_of = [](std::string_view name) {
      std::size_t c = 0;
      while (c < kColumnCount && kColumnNames[c] != name) ++c;
      return c;
    };
    bool any_known = false;
    for (const std::string_view name : names) any_known = any_known || column_of(name) != kColumnCount;
    if (!any_known) {
      fail("", "expected a header row '" + std::string(kHeaderHint) + "', got '" + listed + "'");
    }
    position_.fill(kAbsent);
    for (std::size_t i = 0; i < names.size(); ++i) {
      const std::string_view name = names[i];
      const std::string where = "column " + std::to_string(i + 1);
      if (name.find('"') != std::string_view::npos) {
        fail(where, "quoted fields are not supported: " + std::string(name));
      }
      if (name.empty()) fail(where, "empty column name in header '" + listed + "'");
      const std::size_t c = column_of(name);
      if (c == kColumnCount) {
        fail(std::string(name), "unknown column (expected " + std::string(kHeaderHint) + ")");
      }
      if (position_[c] != kAbsent) {
        fail(std::string(name), "duplicate column (columns " + std::to_string(position_[c] + 1) +
                                    " and " + std::to_string(i + 1) + ")");
      }
      position_[c] = i;
    }
    for (std::size_t c = 0; c < kRequired; ++c) {
      if (position_[c] == kAbsent) {
        fail(std::string(kColumnNames[c]), "missing column (header has: " + listed + ")");
      }
    }
    if ((position_[kForwardSplit] == kAbsent) != (position_[kBackwardSplit] == kAbsent)) {
      fail(position_[kForwardSplit] == kAbsent ? "forward_split" : "backward_split",
           "missing column: forward_split and backward_split come together");
    }
    column_count_ = names.size();
    header_names_ = listed;
  }

  void read_row(std::string_view t) {
    const std::vector<std::string_view> fields = split_fields(t);
    if (fields.size() < column_count_) {
      std::size_t missing = kColumnCount;
      for (std::size_t c = 0; c < kColumnCount; ++c) {
        if (position_[c] == fields.size()) missing = c;
      }
      fail(std::string(kColumnNames[missing]),
           "row has " + std::to_string(fields.size()) + " fields but the header (" + header_names_ +
               ") has " + std::to_string(column_count_));
    }
    if (fields.size() > column_count_) {
      fail("column " + std::to_string(column_count_ + 1),
           "row has " + std::to_string(fields.size()) + " fields but the header (" + header_names_ +
               ") has " + std::to_string(column_count_));
    }
    for (std::size_t c = 0; c < kColumnCount; ++c) {
      if (position_[c] != kAbsent && fields[position_[c]].find('"') != std::string_view::npos) {
        fail(std::string(kColumnNames[c]),
             "quoted fields are not supported: " + std::string(fields[position_[c]]));
      }
    }

    LayerRow row;
    row.layer = parse_int(fields[position_[kLayer]], "layer");
    if (row.layer < 0) fail("layer", "negative layer index " + std::to_string(row.layer));
    if (!profile_.layers.empty() && row.layer <= profile_.layers.back().layer) {
      fail("layer", "layer index " + std::to_string(row.layer) + " does not increase (previous row has " +
                        std::to_string(profile_.layers.back().layer) + ")");
    }

    row.name = std::string(fields[position_[kName]]);
    if (row.name.empty()) fail("name", "empty layer name");
    // What the writer could not write back (check_writable) is refused here.
    if (row.name.front() == '#') fail("name", "a layer name may not start with '#' (a comment)");
    if (std::string why = utf8_problem(row.name); !why.empty()) fail("name", "the layer name " + why);
    if (auto [it, fresh] = name_lines_.emplace(row.name, line_); !fresh) {
      fail("name", "duplicate name " + in_quotes(row.name) + " (first on line " + std::to_string(it->second) + ")");
    }

    row.forward = parse_time(fields[position_[kForward]], "forward_ns");
    row.backward = parse_time(fields[position_[kBackward]], "backward_ns");
    row.grad_bytes = parse_int(fields[position_[kGradBytes]], "grad_bytes");
    if (row.grad_bytes < 0) fail("grad_bytes", "negative size " + std::to_string(row.grad_bytes));
    if (row.grad_bytes > kMaxSizeBytes) {
      fail("grad_bytes", "size " + std::to_string(row.grad_bytes) + " exceeds 2^50 bytes (1 PiB)");
    }
    const auto bytes = checked_add(total_bytes_, row.grad_bytes);
    if (!bytes || *bytes > kMaxSizeBytes) {
      fail("grad_bytes", "the gradients of the layers so far exceed 2^50 bytes (1 PiB)");
    }
    total_bytes_ = *bytes;

    if (position_[kComm] != kAbsent) {
      const std::string_view comm = fields[position_[kComm]];
      if (comm.empty()) {
        fail("comm_ns",
             "empty, but comm_ns must be set on every row when the column is present "
             "(leave the column out to have communication modelled)");
      }
      row.comm = parse_time(comm, "comm_ns");
    }
    if (position_[kUnit] != kAbsent) {
      const std::int64_t unit = parse_int(fields[position_[kUnit]], "unit");
      const std::int64_t previous =
          profile_.layers.empty() ? -1 : *profile_.layers.back().unit;
      if ((profile_.layers.empty() && unit != 0) || (unit != previous && unit != previous + 1)) {
        fail("unit", "unit " + std::to_string(unit) + " after unit " + std::to_string(previous) +
                         ": units start at 0 and each row keeps its predecessor's or the next");
      }
      row.unit = unit;
    }
    if (position_[kActivation] != kAbsent) {
      const std::int64_t kept = parse_int(fields[position_[kActivation]], "activation_bytes");
      if (kept < 0) fail("activation_bytes", "negative size " + std::to_string(kept));
      if (kept > kMaxSizeBytes) {
        fail("activation_bytes", "size " + std::to_string(kept) + " exceeds 2^50 bytes (1 PiB)");
      }
      row.activation_bytes = kept;
    }
    if (position_[kForwardSplit] != kAbsent) {
      row.forward_split = parse_split(fields[position_[kForwardSplit]], "forward_split");
      row.backward_split = parse_split(fields[position_[kBackwardSplit]], "backward_split");
      for (const auto& [field, split, time] :
           {std::tuple{"forward_split", *row.forward_split, row.forward},
            std::tuple{"backward_split", *row.backward_split, row.backward}}) {
        if (split.total() != time.ns()) {
          fail(field, "the rates add up to " + std::to_string(split.total()) + " ns, not the row's " +
                          std::to_string(time.ns()) + " ns");
        }
      }
    }
    // Each term is at most 2^42, the running total at most 2^50: no overflow.
    total_ns_ += row.forward.ns() + row.backward.ns() + (row.comm ? row.comm->ns() : 0);
    if (total_ns_ > kMaxProfileTimeNs) {
      fail("forward_ns", "the times of the layers so far exceed 2^50 ns (13 days)");
    }
    profile_.layers.push_back(std::move(row));
  }

  RateSplit parse_split(std::string_view s, const std::string& field) const {
    try {
      return parse_rate_split(s);
    } catch (const std::invalid_argument& e) {
      fail(field, e.what());
    }
  }

  Duration parse_time(std::string_view s, const std::string& field) const {
    const std::int64_t ns = parse_int(s, field);
    if (ns < 0) fail(field, "negative time " + std::to_string(ns));
    if (ns > kMaxLayerTimeNs) {
      fail(field, "time " + std::to_string(ns) + " ns exceeds 2^42 ns (73 minutes)");
    }
    return Duration(ns);
  }

  // A decimal integer that fits in int64; a leading '+' is allowed.
  std::int64_t parse_int(std::string_view s, const std::string& field) const {
    if (s.empty()) fail(field, "missing value");
    std::string_view digits = s;
    if (digits.size() > 1 && digits.front() == '+' && digits[1] != '-') digits.remove_prefix(1);
    std::int64_t value = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (ec == std::errc::result_out_of_range) {
      fail(field, "value " + std::string(s) + " does not fit in a 64-bit integer");
    }
    if (ec == std::errc() && end == digits.data() + digits.size()) return value;
    double real = 0;
    const auto [rend, rec] = std::from_chars(digits.data(), digits.data() + digits.size(), real);
    if (rec != std::errc::invalid_argument && rend == digits.data() + digits.size()) {
      fail(field, "integers are required, got " + std::string(s));
    }
    fail(field, "not an integer: " + in_quotes(s));
  }

  static constexpr std::size_t kAbsent = static_cast<std::size_t>(-1);

  LayerProfile profile_;
  std::int64_t line_ = 0;
  std::optional<std::int64_t> header_line_;
  std::array<std::size_t, kColumnCount> position_{};
  std::size_t column_count_ = 0;
  std::string header_names_;
  std::unordered_map<std::string, std::int64_t> name_lines_;
  std::unordered_map<std::string, std::int64_t> metadata_lines_;
  std::int64_t total_ns_ = 0;     // forward, backward and comm of the rows so far
  std::int64_t total_bytes_ = 0;  // grad_bytes of the rows so far
};

// Text the CSV dialect can carry in one field: no separator, quote or line
// break, and no surrounding spaces (they would be trimmed on reading).
void check_writable(const LayerProfile& profile, const std::string& field, std::string_view value,
                    bool in_comment) {
  const char* bad = nullptr;
  if (value.find_first_of("\r\n") != std::string_view::npos) bad = "a line break";
  if (!in_comment && value.find(',') != std::string_view::npos) bad = "a ','";
  if (!in_comment && value.find('"') != std::string_view::npos) bad = "a '\"'";
  if (trim(value) != value) bad = "surrounding spaces";
  if (!in_comment && !value.empty() && value.front() == '#') bad = "a leading '#'";
  if (bad) {
    throw InputError({profile.source, {}, {}, field},
                     "cannot be written to a layer profile CSV: " + in_quotes(value) + " holds " + bad);
  }
}

}  // namespace

Duration LayerProfile::total_forward() const {
  Duration total;
  for (const LayerRow& row : layers) total += row.forward;
  return total;
}

Duration LayerProfile::total_backward() const {
  Duration total;
  for (const LayerRow& row : layers) total += row.backward;
  return total;
}

std::int64_t LayerProfile::total_grad_bytes() const {
  std::int64_t total = 0;
  for (const LayerRow& row : layers) total += row.grad_bytes;
  return total;
}

LayerProfile parse_layer_profile_csv(std::string_view text, const std::string& source) {
  return Parser(source).run(text);
}

LayerProfile read_layer_profile_csv(const std::filesystem::path& path) {
  const WorkContext context("reading", path.string(), "layer-profile CSV");
  return parse_layer_profile_csv(read_text_file(path, "layer profile"), path.string());
}

bool looks_like_layer_profile_csv(std::string_view head) {
  LineCursor cursor(head);
  std::string_view line;
  while (cursor.next(line)) {
    const std::string_view t = trim(line);
    if (t.empty() || t.front() == '#') continue;
    bool layer = false;
    bool forward = false;
    bool backward = false;
    for (const std::string_view name : split_fields(t)) {
      layer = layer || name == kColumnNames[kLayer];
      forward = forward || name == kColumnNames[kForward];
      backward = backward || name == kColumnNames[kBackward];
    }
    return layer && forward && backward;
  }
  return false;
}

void write_layer_profile_csv(const LayerProfile& profile, std::ostream& out) {
  check_writable(profile, "model", profile.model, true);
  check_writable(profile, "provenance", profile.provenance, true);
  check_writable(profile, "gpu", profile.gpu, true);
  const bool comm = profile.has_comm();
  for (const LayerRow& row : profile.layers) {
    check_writable(profile, "name", row.name, false);
    if (row.unit.has_value() != profile.has_units() ||
        row.activation_bytes.has_value() != profile.has_activations()) {
      throw InputError({profile.source, {}, {}, row.unit.has_value() != profile.has_units()
                                                    ? "unit" : "activation_bytes"},
                       "cannot be written: set on some layers only (layer " +
                           std::to_string(row.layer) + " differs from the first)");
    }
    if (row.forward_split.has_value() != profile.has_splits() ||
        row.backward_split.has_value() != profile.has_splits()) {
      throw InputError({profile.source, {}, {}, "forward_split"},
                       "cannot be written: set on some layers only (layer " +
                           std::to_string(row.layer) + " differs from the first)");
    }
    if (row.comm.has_value() != comm) {
      throw InputError({profile.source, {}, {}, "comm_ns"},
                       "cannot be written: set on some layers only (layer " + std::to_string(row.layer) +
                           " differs from the first); set it on every layer or on none");
    }
  }

  if (!profile.model.empty()) out << "# model: " << profile.model << '\n';
  if (profile.batch_per_gpu) out << "# batch_per_gpu: " << *profile.batch_per_gpu << '\n';
  if (!profile.provenance.empty()) out << "# provenance: " << profile.provenance << '\n';
  if (profile.update) out << "# update_ns: " << profile.update->ns() << '\n';
  if (!profile.grad_dtype.empty()) out << "# grad_dtype: " << profile.grad_dtype << '\n';
  if (!profile.sharding.empty()) out << "# sharding: " << profile.sharding << '\n';
  if (profile.shard_group) out << "# shard_group: " << *profile.shard_group << '\n';
  if (profile.micro_batches) out << "# micro_batches: " << *profile.micro_batches << '\n';
  if (!profile.gradient_reduction.empty()) {
    out << "# gradient_reduction: " << profile.gradient_reduction << '\n';
  }
  if (!profile.gpu.empty()) out << "# gpu: " << profile.gpu << '\n';
  if (profile.update_split) out << "# update_split: " << format_rate_split(*profile.update_split) << '\n';
  const bool units = profile.has_units();
  const bool activations = profile.has_activations();
  const bool splits = profile.has_splits();
  out << "layer,name,forward_ns,backward_ns,grad_bytes" << (comm ? ",comm_ns" : "")
      << (units ? ",unit" : "") << (activations ? ",activation_bytes" : "")
      << (splits ? ",forward_split,backward_split" : "") << '\n';
  for (const LayerRow& row : profile.layers) {
    out << row.layer << ',' << row.name << ',' << row.forward.ns() << ',' << row.backward.ns() << ','
        << row.grad_bytes;
    if (comm) out << ',' << row.comm->ns();
    if (units) out << ',' << *row.unit;
    if (activations) out << ',' << *row.activation_bytes;
    if (splits) {
      out << ',' << format_rate_split(*row.forward_split) << ',' << format_rate_split(*row.backward_split);
    }
    out << '\n';
  }
}

std::optional<std::int64_t> dtype_size(std::string_view name) {
  if (name == "fp32") return 4;
  if (name == "bf16" || name == "fp16") return 2;
  return std::nullopt;
}

bool is_sharding_name(std::string_view name) {
  return name == "none" || name == "zero1" || name == "zero2" || name == "zero3" || name == "hsdp";
}

bool is_gradient_reduction_name(std::string_view name) {
  return name == "reduce_scatter" || name == "reduce" || name == "all_reduce";
}

bool KernelClassTable::empty() const {
  for (const std::int64_t n : kernels) {
    if (n != 0) return false;
  }
  return true;
}

std::int64_t LayerProfile::grad_element_bytes() const {
  return grad_dtype.empty() ? 4 : dtype_size(grad_dtype).value_or(4);
}

}  // namespace ssgd::trace
