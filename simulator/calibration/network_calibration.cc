#include "simulator/calibration/network_calibration.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <system_error>

#include "common/atomic_file.h"
#include "common/error.h"
#include "common/text_file.h"
#include "common/units.h"
#include "common/utf8.h"
#include "common/work_context.h"
#include "simulator/calibration/bounded_yaml.h"

namespace ssgd::sim {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Keys of each mapping, in the order the file writes them.
constexpr std::array<std::string_view, 3> kTopKeys = {"ssgd_network_calibration", "level",
                                                      "collectives"};
constexpr std::array<std::string_view, 5> kCollectiveKeys = {"op", "algorithm", "ranks", "sources",
                                                             "bands"};
constexpr std::array<std::string_view, 6> kBandKeys = {"max_bytes", "latency",      "bandwidth",
                                                       "points",    "median_error", "max_error"};

template <std::size_t N>
std::string key_list(const std::array<std::string_view, N>& keys) {
  std::string s;
  for (const auto k : keys) s += (s.empty() ? "" : ", ") + std::string(k);
  return s;
}

std::string describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: return "a mapping";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Scalar: return fmt::format("'{}'", node.Scalar());
    case YAML::NodeType::Null: return "nothing";
    case YAML::NodeType::Undefined: break;
  }
  return "nothing";
}

// Walks the YAML document; every failure names the file, the line and the
// key path ("collectives[0].bands[2].latency").
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const YAML::Node& node, const std::string& path,
                         const std::string& why) const {
    std::optional<std::int64_t> line;
    if (node.IsDefined() && !node.Mark().is_null() && node.Mark().line >= 0)
      line = node.Mark().line + 1;
    throw InputError(InputLocation{file_, line, std::nullopt, path}, why);
  }

  // The mapping's values by key, after checking that it is a mapping with
  // plain keys, each once, each known, and the required ones present.
  template <std::size_t N>
  std::map<std::string, YAML::Node> mapping(
      const YAML::Node& node, const std::string& path, const std::array<std::string_view, N>& known,
      std::initializer_list<std::string_view> required) const {
    if (!node.IsMap()) {
      fail(node, path,
           fmt::format("expected a mapping with keys {}, got {}", key_list(known), describe(node)));
    }
    std::map<std::string, YAML::Node> values;
    for (const auto& kv : node) {
      if (!kv.first.IsScalar())
        fail(kv.first, path, "keys must be plain names, got " + describe(kv.first));
      const std::string key = kv.first.Scalar();
      const std::string key_path = join(path, key);
      if (std::find(known.begin(), known.end(), key) == known.end()) {
        fail(kv.first, key_path,
             fmt::format("unknown key '{}'; expected one of {}", key, key_list(known)));
      }
      if (!values.emplace(key, kv.second).second) fail(kv.first, key_path, "key given twice");
    }
    for (const auto key : required) {
      if (!values.contains(std::string(key))) {
        fail(node, join(path, std::string(key)), fmt::format("missing key '{}'", key));
      }
    }
    return values;
  }

  // A scalar parsed by `parse`, whose std::invalid_argument becomes an
  // InputError at the node.
  template <typename F>
  auto scalar(const YAML::Node& node, const std::string& path, F parse) const {
    if (!node.IsScalar()) fail(node, path, "expected a single value, got " + describe(node));
    try {
      return parse(node.Scalar());
    } catch (const std::invalid_argument& e) {
      fail(node, path, e.what());
    }
  }

  const YAML::Node& sequence(const YAML::Node& node, const std::string& path,
                             const char* of) const {
    if (!node.IsSequence())
      fail(node, path, fmt::format("expected a list of {}, got {}", of, describe(node)));
    return node;
  }

  static std::string join(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }

 private:
  std::string file_;
};

std::int64_t parse_integer(const std::string& text, std::int64_t min) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
    throw std::invalid_argument(fmt::format("expected a whole number, got '{}'", text));
  }
  if (v < min) throw std::invalid_argument(fmt::format("must be at least {}, got {}", min, v));
  return v;
}

double parse_error_fraction(const std::string& text) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v)) {
    throw std::invalid_argument(fmt::format("expected a number, got '{}'", text));
  }
  if (v < 0) throw std::invalid_argument(fmt::format("must not be negative, got {}", text));
  return v;
}

double parse_max_bytes(const std::string& text) {
  if (text == "inf") return kInf;
  const std::int64_t b = parse_bytes(text);
  if (b <= 0) throw std::invalid_argument("must be greater than zero (or inf)");
  return static_cast<double>(b);
}

Duration parse_latency(const std::string& text) { return parse_duration(text); }

double parse_bandwidth(const std::string& text) {
  const double x = parse_rate_bytes_per_s(text);
  if (!(x > 0) || !std::isfinite(x))
    throw std::invalid_argument(fmt::format("rate '{}' must be greater than zero", text));
  return x;
}

// Exact text for the file (max_bytes is positive, or inf).
std::string size_text(double bytes) {
  if (std::isinf(bytes)) return "inf";
  return exact_bytes_text(static_cast<std::int64_t>(bytes));
}

std::string strip_zeros(std::string s) {
  if (s.find('.') == std::string::npos) return s;
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

// Exact: whole nanoseconds as ns or us.
std::string latency_text(Duration d) {
  const std::int64_t ns = d.ns();
  if (ns < 1000) return fmt::format("{}ns", ns);
  return strip_zeros(fmt::format("{}.{:03}", ns / 1000, ns % 1000)) + "us";
}

// Decimal units, six decimals: within a millionth of the fitted value.
std::string rate_text(double bytes_per_s) {
  constexpr std::array<std::pair<double, const char*>, 4> kUnits = {
      {{1e12, "TB/s"}, {1e9, "GB/s"}, {1e6, "MB/s"}, {1e3, "kB/s"}}};
  for (const auto& [scale, unit] : kUnits) {
    if (bytes_per_s >= scale) return strip_zeros(fmt::format("{:.6f}", bytes_per_s / scale)) + unit;
  }
  return strip_zeros(fmt::format("{:.6f}", bytes_per_s)) + "B/s";
}

}  // namespace

std::string calibration_algorithm_names() {
  // The textbook algorithms: a calibrated collective runs one of them with
  // the fitted costs, whichever library was measured.
  return textbook_algorithm_names();
}

const CalibrationBand& CalibratedCollective::band_for(double bytes) const {
  for (const auto& b : bands) {
    if (bytes <= b.max_bytes) return b;
  }
  return bands.back();
}

const CalibratedCollective* NetworkCalibration::find(CollectiveOp op, std::int64_t ranks) const {
  const CalibratedCollective* any = nullptr;
  const CalibratedCollective* joint = nullptr;
  for (const auto& c : collectives) {
    if (c.op != op) continue;
    if (any == nullptr) any = &c;
    if (c.ranks.size() == 1 && c.ranks.front() == ranks) return &c;
    if (joint == nullptr && c.ranks.size() != 1) joint = &c;
  }
  return joint != nullptr ? joint : any;
}

NetworkCalibration read_network_calibration(const std::filesystem::path& calibration_file) {
  const std::string file = calibration_file.string();
  const WorkContext context("reading", file, "network calibration YAML");
  const std::string text = read_text_file(calibration_file, "network calibration file");
  require_utf8_text(text, calibration_file.string(), "the calibration file");
  require_no_control_characters(text, calibration_file.string(), "the calibration file");
  const Reader r(file);
  YAML::Node root;
  try {
    require_bounded_yaml(text, file, "network calibration file");
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw InputError(
        InputLocation{
            file, e.mark.is_null() ? std::nullopt : std::optional<std::int64_t>(e.mark.line + 1),
            std::nullopt, ""},
        "not valid YAML: " + e.msg);
  }
  const auto top =
      r.mapping(root, "", kTopKeys, {"ssgd_network_calibration", "level", "collectives"});
  r.scalar(
      top.at("ssgd_network_calibration"), "ssgd_network_calibration", [](const std::string& v) {
        if (v != "1")
          throw std::invalid_argument("unsupported version '" + v + "'; this ssgd reads version 1");
        return 1;
      });
  NetworkCalibration cal;
  cal.level = r.scalar(top.at("level"), "level", [](const std::string& v) {
    if (v != "inter_node" && v != "intra_node") {
      throw std::invalid_argument("expected inter_node or intra_node, got '" + v + "'");
    }
    return v;
  });
  const YAML::Node& list = r.sequence(top.at("collectives"), "collectives", "collectives");
  if (list.size() == 0) r.fail(list, "collectives", "expected at least one collective");
  std::map<std::pair<CollectiveOp, std::vector<std::int64_t>>, std::size_t> seen;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string path = fmt::format("collectives[{}]", i);
    const auto c = r.mapping(list[i], path, kCollectiveKeys, {"op", "algorithm", "bands"});
    CalibratedCollective cc;
    cc.op = r.scalar(c.at("op"), path + ".op", [](const std::string& v) {
      const auto op = parse_collective_op(v);
      if (!op)
        throw std::invalid_argument("unknown op '" + v + "'; expected one of " +
                                    collective_op_names());
      return *op;
    });
    cc.algorithm = r.scalar(c.at("algorithm"), path + ".algorithm", [&](const std::string& v) {
      const auto a = parse_collective_algorithm(v);
      if (!a || *a == CollectiveAlgorithm::kAuto || !library_runs(CollectiveLibrary::kGeneric, *a)) {
        throw std::invalid_argument("unknown algorithm '" + v + "'; expected one of " +
                                    calibration_algorithm_names());
      }
      alpha_beta_terms(cc.op, *a, 2);  // throws, naming the algorithms that implement the op
      return *a;
    });
    if (c.contains("ranks")) {
      const std::string rp = path + ".ranks";
      for (const auto& n : r.sequence(c.at("ranks"), rp, "rank counts")) {
        cc.ranks.push_back(
            r.scalar(n, rp, [](const std::string& v) { return parse_integer(v, 2); }));
        if (cc.ranks.size() > 1 && cc.ranks.back() <= cc.ranks[cc.ranks.size() - 2]) {
          r.fail(n, rp, "rank counts must be listed once each, in increasing order");
        }
      }
    }
    if (c.contains("sources")) {
      const std::string sp = path + ".sources";
      for (const auto& n : r.sequence(c.at("sources"), sp, "file names")) {
        cc.sources.push_back(r.scalar(n, sp, [](const std::string& v) { return v; }));
      }
    }
    const std::string bp = path + ".bands";
    const YAML::Node& bands = r.sequence(c.at("bands"), bp, "bands");
    if (bands.size() == 0) r.fail(bands, bp, "expected at least one band");
    for (std::size_t b = 0; b < bands.size(); ++b) {
      const std::string p = fmt::format("{}[{}]", bp, b);
      const auto n = r.mapping(bands[b], p, kBandKeys, {"max_bytes", "latency", "bandwidth"});
      CalibrationBand band;
      band.max_bytes = r.scalar(n.at("max_bytes"), p + ".max_bytes", parse_max_bytes);
      band.latency = r.scalar(n.at("latency"), p + ".latency", parse_latency);
      band.bandwidth_bytes_per_s = r.scalar(n.at("bandwidth"), p + ".bandwidth", parse_bandwidth);
      if (n.contains("points")) {
        band.points = r.scalar(n.at("points"), p + ".points",
                               [](const std::string& v) { return parse_integer(v, 0); });
      }
      if (n.contains("median_error"))
        band.median_error =
            r.scalar(n.at("median_error"), p + ".median_error", parse_error_fraction);
      if (n.contains("max_error"))
        band.max_error = r.scalar(n.at("max_error"), p + ".max_error", parse_error_fraction);
      if (!cc.bands.empty() && !(band.max_bytes > cc.bands.back().max_bytes)) {
        r.fail(n.at("max_bytes"), p + ".max_bytes",
               fmt::format(
                   "bands must be in increasing order of max_bytes; the band before ends at {}",
                   size_text(cc.bands.back().max_bytes)));
      }
      cc.bands.push_back(band);
    }
    if (!std::isinf(cc.bands.back().max_bytes)) {
      r.fail(bands[bands.size() - 1], fmt::format("{}[{}].max_bytes", bp, bands.size() - 1),
             "the last band must have max_bytes: inf, so that every size has a band");
    }
    const auto [it, fresh] = seen.emplace(std::make_pair(cc.op, cc.ranks), i);
    if (!fresh) {
      r.fail(list[i], path,
             fmt::format("collectives[{}] already calibrates {} over the same ranks", it->second,
                         to_string(cc.op)));
    }
    cal.collectives.push_back(std::move(cc));
  }
  return cal;
}

void write_network_calibration(const NetworkCalibration& cal, const std::filesystem::path& file) {
  YAML::Emitter out;
  out << YAML::BeginMap << YAML::Key << "ssgd_network_calibration" << YAML::Value << 1;
  out << YAML::Key << "level" << YAML::Value << cal.level;
  out << YAML::Key << "collectives" << YAML::Value << YAML::BeginSeq;
  for (const auto& c : cal.collectives) {
    out << YAML::BeginMap << YAML::Key << "op" << YAML::Value << to_string(c.op);
    out << YAML::Key << "algorithm" << YAML::Value << to_string(c.algorithm);
    out << YAML::Key << "ranks" << YAML::Value << YAML::Flow << c.ranks;
    out << YAML::Key << "sources" << YAML::Value << YAML::Flow << c.sources;
    out << YAML::Key << "bands" << YAML::Value << YAML::BeginSeq;
    for (const auto& b : c.bands) {
      out << YAML::Flow << YAML::BeginMap;
      out << YAML::Key << "max_bytes" << YAML::Value << size_text(b.max_bytes);
      out << YAML::Key << "latency" << YAML::Value << latency_text(b.latency);
      out << YAML::Key << "bandwidth" << YAML::Value << rate_text(b.bandwidth_bytes_per_s);
      out << YAML::Key << "points" << YAML::Value << b.points;
      out << YAML::Key << "median_error" << YAML::Value << fmt::format("{:.4f}", b.median_error);
      out << YAML::Key << "max_error" << YAML::Value << fmt::format("{:.4f}", b.max_error);
      out << YAML::EndMap;
    }
    out << YAML::EndSeq << YAML::EndMap;
  }
  out << YAML::EndSeq << YAML::EndMap;
  if (!out.good()) throw std::runtime_error("cannot write the calibration: " + out.GetLastError());
  AtomicFile f(file);
  f.stream() << "# ssgd network calibration: alpha-beta costs per size band (docs/calibration.md)\n"
             << out.c_str() << "\n";
  f.commit();
}

}  // namespace ssgd::sim
