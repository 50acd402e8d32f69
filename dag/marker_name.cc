#include "dag/marker_name.h"

#include <stdexcept>

#include "common/error.h"

namespace ssgd::dag {

MarkerName parse_marker_name(const trace::v1::MarkerRange& m, const std::string& source,
                             std::int64_t record) {
  MarkerName out;
  const std::string& name = m.name();
  const auto slash = name.find('/');
  const std::string prefix = slash == std::string::npos ? "" : name.substr(0, slash);
  if (prefix == "iteration") {
    out.kind = MarkerName::Kind::kIteration;
  } else if (prefix == "forward") {
    out.kind = MarkerName::Kind::kForward;
  } else if (prefix == "backward") {
    out.kind = MarkerName::Kind::kBackward;
  } else {
    return out;
  }
  const std::string rest = name.substr(slash + 1);
  if (rest.empty()) {
    throw InputError({source, std::nullopt, record, "marker.name"},
                     "marker '" + name + "' names no " +
                         (prefix == "iteration" ? "iteration number" : "layer"));
  }
  if (m.end_ns() < m.start_ns()) {
    throw InputError({source, std::nullopt, record, "marker.end_ns"},
                     "marker '" + name + "' ends before it starts");
  }
  if (out.kind == MarkerName::Kind::kIteration) {
    try {
      std::size_t used = 0;
      out.number = std::stoll(rest, &used);
      if (used != rest.size()) throw std::invalid_argument(rest);
    } catch (const std::exception&) {
      throw InputError({source, std::nullopt, record, "marker.name"},
                       "marker '" + name + "': iteration number is not an integer");
    }
  } else {
    out.layer = rest;
  }
  return out;
}

}  // namespace ssgd::dag
