#include "simulator/calibration/network_calibration.h"

#include <cmath>
#include <limits>
#include <set>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "common/atomic_file.h"
#include "common/error.h"
#include "common/text_file.h"
#include "common/units.h"

namespace ssgd::sim {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const YAML::Node& node, const std::string& field, const std::string& why) const {
    std::optional<std::int64_t> line;
    if (!node.Mark().is_null() && node.Mark().line >= 0) line = node.Mark().line + 1;
    throw InputError(InputLocation{file_, line, std::nullopt, field}, why);
  }

  void only_keys(const YAML::Node& map, const std::string& path, std::set<std::string> allowed) const {
    if (!map.IsMap()) fail(map, path, "expected a mapping");
    for (const auto& kv : map) {
      const std::string key = kv.first.Scalar();
      if (!allowed.contains(key)) {
        std::string known;
        for (const auto& a : allowed) known += (known.empty() ? "" : ", ") + a;
        fail(kv.first, path.empty() ? key : path + "." + key,
             fmt::format("unknown key '{}' (known here: {})", key, known));
      }
    }
  }

  YAML::Node need(const YAML::Node& map, const std::string& key, const std::string& path) const {
    const YAML::Node n = map[key];
    if (!n) fail(map, path.empty() ? key : path + "." + key, "missing key '" + key + "'");
    return n;
  }

  template <typename F>
  auto scalar(const YAML::Node& n, const std::string& field, F parse) const {
    if (!n.IsScalar()) fail(n, field, "expected a single value");
    try {
      return parse(n.Scalar());
    } catch (const std::invalid_argument& e) {
      fail(n, field, e.what());
    }
  }

  std::string file_;
};

double parse_max_bytes(std::string_view v) {
  if (v == "inf") return kInf;
  return static_cast<double>(parse_bytes(v));
}

std::string bytes_text(double b) {
  return std::isinf(b) ? std::string("inf") : std::to_string(static_cast<std::int64_t>(b)) + "B";
}

}  // namespace

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

NetworkCalibration read_network_calibration(const std::filesystem::path& path) {
  const std::string file = path.string();
  const std::string text = read_text_file(path, "network calibration file");
  Reader r(file);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw InputError(InputLocation{file, e.mark.is_null() ? std::nullopt : std::optional<std::int64_t>(e.mark.line + 1),
                                   std::nullopt, ""},
                     "not valid YAML: " + e.msg);
  }
  if (!root.IsMap()) r.fail(root, "", "expected a mapping with ssgd_network_calibration: 1");
  r.only_keys(root, "", {"ssgd_network_calibration", "level", "collectives"});
  const auto version = r.scalar(r.need(root, "ssgd_network_calibration", ""), "ssgd_network_calibration",
                                [](const std::string& v) { return v; });
  if (version != "1") {
    r.fail(root["ssgd_network_calibration"], "ssgd_network_calibration",
           "unsupported version '" + version + "'; this ssgd reads version 1");
  }
  NetworkCalibration cal;
  cal.level = r.scalar(r.need(root, "level", ""), "level", [](const std::string& v) {
    if (v != "inter_node" && v != "intra_node") {
      throw std::invalid_argument("expected inter_node or intra_node, got '" + v + "'");
    }
    return v;
  });
  const YAML::Node list = r.need(root, "collectives", "");
  if (!list.IsSequence() || list.size() == 0) r.fail(list, "collectives", "expected a non-empty list");
  for (std::size_t i = 0; i < list.size(); ++i) {
    const YAML::Node c = list[i];
    const std::string path = fmt::format("collectives[{}]", i);
    r.only_keys(c, path, {"op", "algorithm", "ranks", "sources", "bands"});
    CalibratedCollective cc;
    cc.op = r.scalar(r.need(c, "op", path), path + ".op", [](const std::string& v) {
      const auto op = parse_collective_op(v);
      if (!op) throw std::invalid_argument("unknown op '" + v + "'; known: " + collective_op_names());
      return *op;
    });
    cc.algorithm = r.scalar(r.need(c, "algorithm", path), path + ".algorithm", [](const std::string& v) {
      const auto a = parse_collective_algorithm(v);
      if (!a || *a == CollectiveAlgorithm::kAuto) {
        throw std::invalid_argument("unknown algorithm '" + v + "'; known: " + collective_algorithm_names());
      }
      return *a;
    });
    if (c["ranks"]) {
      if (!c["ranks"].IsSequence()) r.fail(c["ranks"], path + ".ranks", "expected a list of rank counts");
      for (const auto& n : c["ranks"]) {
        cc.ranks.push_back(r.scalar(n, path + ".ranks", [](const std::string& v) {
          const long long x = std::stoll(v);
          if (x < 1) throw std::invalid_argument("rank counts are at least 1");
          return static_cast<std::int64_t>(x);
        }));
      }
    }
    if (c["sources"]) {
      if (!c["sources"].IsSequence()) r.fail(c["sources"], path + ".sources", "expected a list");
      for (const auto& n : c["sources"]) cc.sources.push_back(n.Scalar());
    }
    const YAML::Node bands = r.need(c, "bands", path);
    if (!bands.IsSequence() || bands.size() == 0) r.fail(bands, path + ".bands", "expected a non-empty list");
    for (std::size_t b = 0; b < bands.size(); ++b) {
      const YAML::Node n = bands[b];
      const std::string bp = fmt::format("{}.bands[{}]", path, b);
      r.only_keys(n, bp, {"max_bytes", "latency", "bandwidth", "points", "median_error", "max_error"});
      CalibrationBand band;
      band.max_bytes = r.scalar(r.need(n, "max_bytes", bp), bp + ".max_bytes", parse_max_bytes);
      band.latency = r.scalar(r.need(n, "latency", bp), bp + ".latency", [](const std::string& v) {
        const Duration d = parse_duration(v);
        if (d < Duration::zero()) throw std::invalid_argument("must not be negative");
        return d;
      });
      band.bandwidth_bytes_per_s = r.scalar(r.need(n, "bandwidth", bp), bp + ".bandwidth", [](const std::string& v) {
        const double x = parse_rate_bytes_per_s(v);
        if (!(x > 0) || !std::isfinite(x)) throw std::invalid_argument("must be greater than zero");
        return x;
      });
      if (n["points"]) band.points = n["points"].as<std::int64_t>(0);
      if (n["median_error"]) band.median_error = n["median_error"].as<double>(0);
      if (n["max_error"]) band.max_error = n["max_error"].as<double>(0);
      if (!cc.bands.empty() && !(band.max_bytes > cc.bands.back().max_bytes)) {
        r.fail(n["max_bytes"], bp + ".max_bytes", "bands must be in increasing order of max_bytes");
      }
      cc.bands.push_back(band);
    }
    if (!std::isinf(cc.bands.back().max_bytes)) {
      r.fail(bands[bands.size() - 1], path + ".bands", "the last band must have max_bytes: inf");
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
    out << YAML::Key << "sources" << YAML::Value << YAML::BeginSeq;
    for (const auto& s : c.sources) out << s;
    out << YAML::EndSeq;
    out << YAML::Key << "bands" << YAML::Value << YAML::BeginSeq;
    for (const auto& b : c.bands) {
      out << YAML::Flow << YAML::BeginMap << YAML::Key << "max_bytes" << YAML::Value << bytes_text(b.max_bytes)
          << YAML::Key << "latency" << YAML::Value << (std::to_string(b.latency.ns()) + "ns")
          << YAML::Key << "bandwidth" << YAML::Value
          << fmt::format("{:.0f}B/s", b.bandwidth_bytes_per_s) << YAML::Key << "points"
          << YAML::Value << b.points << YAML::Key << "median_error" << YAML::Value << b.median_error
          << YAML::Key << "max_error" << YAML::Value << b.max_error << YAML::EndMap;
    }
    out << YAML::EndSeq << YAML::EndMap;
  }
  out << YAML::EndSeq << YAML::EndMap;
  AtomicFile f(file);
  f.stream() << "# ssgd network calibration (docs/calibration.md)\n" << out.c_str() << "\n";
  f.commit();
}

}  // namespace ssgd::sim
