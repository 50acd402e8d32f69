#include "traces/marker_names.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <set>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "traces/event_rules.h"

namespace ssgd::trace {
namespace {

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

std::optional<std::int64_t> whole_number(std::string_view text) {
  std::int64_t v = 0;
  const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || p != text.data() + text.size()) return std::nullopt;
  return v;
}

}  // namespace

std::string iteration_mark(std::int64_t n) {
  return std::string(kIterationMarkPrefix) + std::to_string(n);
}
std::string forward_mark(std::string_view layer) {
  return std::string(kForwardMarkPrefix) + std::string(layer);
}
std::string backward_mark(std::string_view layer) {
  return std::string(kBackwardMarkPrefix) + std::string(layer);
}
namespace {

constexpr std::pair<std::string_view, v1::Collective::Op> kMarkOps[] = {
    {"all_reduce", v1::Collective::ALL_REDUCE},
    {"all_gather", v1::Collective::ALL_GATHER},
    {"reduce", v1::Collective::REDUCE},
    {"broadcast", v1::Collective::BROADCAST},
    {"reduce_scatter", v1::Collective::REDUCE_SCATTER},
};

// "all_reduce, all_gather, ...": the names kMarkOps knows, for messages.
std::string mark_op_names() {
  std::string out;
  for (const auto& [n, op] : kMarkOps) out += fmt::format("{}{}", out.empty() ? "" : ", ", n);
  return out;
}

// ssgd/<kind>/<layer>=<bytes>
std::string layer_bytes_mark(std::string_view kind, std::string_view layer, std::int64_t bytes) {
  return std::string(kMetadataMarkPrefix) + std::string(kind) + "/" + std::string(layer) + "=" +
         std::to_string(bytes);
}

}  // namespace

std::string grad_bytes_mark(std::string_view layer, std::int64_t bytes) {
  return layer_bytes_mark("grad_bytes", layer, bytes);
}

std::string activation_bytes_mark(std::string_view layer, std::int64_t bytes) {
  return layer_bytes_mark("activation_bytes", layer, bytes);
}

std::optional<std::int64_t> profiler_step_number(std::string_view name) {
  constexpr std::string_view kPrefix = "ProfilerStep#";
  if (!starts_with(name, kPrefix)) return std::nullopt;
  return whole_number(name.substr(kPrefix.size()));
}

MarkerName parse_marker_name(const v1::MarkerRange& m, const std::string& source,
                             std::int64_t record) {
  MarkerName out;
  const std::string& name = m.name();
  std::string_view rest;
  if (starts_with(name, kIterationMarkPrefix)) {
    out.kind = MarkerName::Kind::kIteration;
    rest = std::string_view(name).substr(kIterationMarkPrefix.size());
  } else if (starts_with(name, kForwardMarkPrefix)) {
    out.kind = MarkerName::Kind::kForward;
    rest = std::string_view(name).substr(kForwardMarkPrefix.size());
  } else if (starts_with(name, kBackwardMarkPrefix)) {
    out.kind = MarkerName::Kind::kBackward;
    rest = std::string_view(name).substr(kBackwardMarkPrefix.size());
  } else {
    return out;
  }
  if (rest.empty()) {
    throw InputError({source, std::nullopt, record, "marker.name"},
                     "marker '" + name + "' names no " +
                         (out.kind == MarkerName::Kind::kIteration ? "iteration number" : "layer"));
  }
  if (m.end_ns() < m.start_ns()) {
    throw InputError({source, std::nullopt, record, "marker.end_ns"},
                     "marker '" + name + "' ends before it starts");
  }
  if (out.kind == MarkerName::Kind::kIteration) {
    const auto n = whole_number(rest);
    if (!n) {
      throw InputError({source, std::nullopt, record, "marker.name"},
                       "marker '" + name + "': iteration number is not an integer");
    }
    out.number = *n;
  } else {
    out.layer = std::string(rest);
  }
  return out;
}

bool is_metadata_mark(std::string_view name) { return starts_with(name, kMetadataMarkPrefix); }

MetadataMark parse_metadata_mark(std::string_view name, const InputLocation& where) {
  InputLocation at = where;
  if (at.field.empty()) at.field = "name";
  auto fail = [&](const std::string& problem) -> InputError {
    return InputError(at, "metadata mark '" + std::string(name) + "': " + problem);
  };
  std::string_view body = name;
  if (starts_with(body, kMetadataMarkPrefix)) body.remove_prefix(kMetadataMarkPrefix.size());
  const auto eq = body.find('=');
  if (eq == std::string_view::npos) throw fail("no '=' (expected ssgd/<key>=<value>)");
  const std::string_view key = body.substr(0, eq);
  const std::string_view value = body.substr(eq + 1);
  if (key.empty()) throw fail("no key before '='");
  auto count = [&](std::string_view text, std::string_view what,
                   std::int64_t max = std::numeric_limits<std::int64_t>::max()) {
    const auto v = whole_number(text);
    if (!v || *v < 0) {
      throw fail(std::string(what) + " '" + std::string(text) + "' is not a non-negative integer");
    }
    if (*v > max) throw fail(std::string(what) + " " + std::string(text) + " is out of range");
    return *v;
  };
  // A comma-separated list of them, each as count() reads it.
  auto counts = [&](std::string_view text, std::string_view what,
                    std::int64_t max = std::numeric_limits<std::int64_t>::max()) {
    std::vector<std::int64_t> out;
    for (std::size_t start = 0; start <= text.size();) {
      const auto end = std::min(text.find(',', start), text.size());
      out.push_back(count(text.substr(start, end - start), what, max));
      start = end + 1;
    }
    return out;
  };
  // The limits of event_rules.h, so that what a mark sets a trace can hold.
  if (key == "rank") return RankMark{static_cast<std::int32_t>(count(value, "rank", kMaxRanks - 1))};
  if (key == "world_size") {
    const auto w = count(value, "world size", kMaxRanks);
    if (w == 0) throw fail("world size 0");
    return WorldSizeMark{static_cast<std::int32_t>(w)};
  }
  if (key == "hostname") {
    if (value.empty()) throw fail("empty hostname");
    return HostnameMark{std::string(value)};
  }
  if (key == "clock_realtime_ns") return ClockRealtimeMark{count(value, "clock_realtime_ns")};
  // ssgd/<kind>/<layer>: the layer, or nullopt for another key; a key of
  // this kind without a layer is an error.
  auto layer_of = [&](std::string_view kind) -> std::optional<std::string> {
    if (key != kind && !(starts_with(key, kind) && key[kind.size()] == '/')) return std::nullopt;
    const std::string_view layer =
        key.size() > kind.size() + 1 ? key.substr(kind.size() + 1) : std::string_view();
    if (layer.empty()) {
      throw fail(fmt::format("{0} names no layer (expected ssgd/{0}/<layer>=<bytes>)", kind));
    }
    return std::string(layer);
  };
  if (auto layer = layer_of("grad_bytes")) {
    return GradBytesMark{std::move(*layer), count(value, "bytes")};
  }
  if (auto layer = layer_of("activation_bytes")) {
    // The profile's bound on activation_bytes (traces/layer_profile.h).
    return ActivationBytesMark{std::move(*layer), count(value, "bytes", std::int64_t{1} << 50)};
  }
  // ssgd/<kind>/<op>: the op, or nullopt for another key.
  auto op_of = [&](std::string_view kind) -> std::optional<v1::Collective::Op> {
    if (!(starts_with(key, kind) && key.size() > kind.size() && key[kind.size()] == '/')) {
      if (key == kind && kind == "collective_ranks") {
        throw fail("collective_ranks names no op (expected ssgd/collective_ranks/<op>=<ranks>)");
      }
      return std::nullopt;
    }
    const std::string_view op = key.substr(kind.size() + 1);
    if (auto known = metadata_mark_op(op)) return known;
    throw fail(fmt::format("{} op '{}' is not one of {}", kind, op, mark_op_names()));
  };
  if (auto op = op_of("collective_ranks")) {
    if (value.find(',') == std::string_view::npos) {
      const auto n = count(value, "ranks", kMaxRanks);
      if (n == 0) throw fail("ranks 0");
      return CollectiveRanksMark{*op, static_cast<std::int32_t>(n), {}};
    }
    // The members of this rank's group, in the group's order.
    CollectiveRanksMark m{*op, 0, {}};
    std::set<std::int64_t> seen;
    for (const std::int64_t r : counts(value, "rank", kMaxRanks - 1)) {
      if (!seen.insert(r).second) throw fail(fmt::format("rank {} is listed twice", r));
      m.members.push_back(static_cast<std::int32_t>(r));
    }
    m.ranks = static_cast<std::int32_t>(m.members.size());
    return m;
  }
  const auto sized_op = op_of("collective_bytes");
  if (key == "collective_bytes" || sized_op) {
    CollectiveBytesMark m;
    m.op = sized_op;
    if (!value.empty()) m.sizes_bytes = counts(value, "collective size");
    return m;
  }
  return UnknownMetadataMark{std::string(key), std::string(value)};
}

std::optional<v1::Collective::Op> metadata_mark_op(std::string_view name) {
  for (const auto& [n, op] : kMarkOps) {
    if (n == name) return op;
  }
  return std::nullopt;
}

std::string_view metadata_mark_op_name(v1::Collective::Op op) {
  for (const auto& [n, o] : kMarkOps) {
    if (o == op) return n;
  }
  return {};
}

bool IdentityMarks::take(const MetadataMark& mark, std::string_view name, std::string_view at,
                         const std::function<std::int64_t()>& start_ns) {
  ++marks;
  const auto keep = [&](auto& slot, const auto& value, std::string_view key) {
    if (!slot) {
      slot = value;
    } else if (*slot != value) {
      conflicts.push_back(
          fmt::format("{} ({}) disagrees with the first ssgd/{}={}", name, at, key, *slot));
    }
  };
  if (const auto* r = std::get_if<RankMark>(&mark)) {
    keep(rank, r->rank, "rank");
  } else if (const auto* w = std::get_if<WorldSizeMark>(&mark)) {
    keep(world_size, w->world_size, "world_size");
  } else if (const auto* h = std::get_if<HostnameMark>(&mark)) {
    keep(hostname, h->hostname, "hostname");
  } else if (const auto* c = std::get_if<ClockRealtimeMark>(&mark)) {
    const std::int64_t start = start_ns();
    if (!clock_realtime_ns || start < clock_mark_ns) {
      clock_realtime_ns = c->realtime_ns;
      clock_mark_ns = start;
    }
  } else if (const auto* u = std::get_if<UnknownMetadataMark>(&mark)) {
    unknown_keys.insert(u->key);
    return false;
  } else {
    return false;
  }
  return true;
}

std::string IdentityMarks::summary(const std::vector<std::string>& more) const {
  std::vector<std::string> said;
  if (rank) said.push_back(fmt::format("rank {}", *rank));
  if (world_size) said.push_back(fmt::format("world size {}", *world_size));
  if (hostname) said.push_back("host " + *hostname);
  if (clock_realtime_ns) said.emplace_back("clock");
  said.insert(said.end(), more.begin(), more.end());
  if (!unknown_keys.empty()) said.push_back(fmt::format("{} unknown key(s)", unknown_keys.size()));
  return fmt::format("{} ssgd/ marks: {}", marks, fmt::join(said, ", "));
}

}  // namespace ssgd::trace
