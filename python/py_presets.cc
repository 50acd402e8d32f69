// ssgd.presets(): what `ssgd presets` prints (tools/ssgd/cmd_presets.cc), as
// data: link presets, platform presets, collective algorithms, overlap
// policies and scenario keys.
#include <string>

#include <pybind11/pybind11.h>
#include <nlohmann/json.hpp>

#include "python/py_module.h"
#include "simulator/collective/collective.h"
#include "simulator/platform/link_preset.h"
#include "simulator/platform/platform_preset.h"
#include "simulator/policy/overlap_policy.h"
#include "simulator/scenario/scenario_schema.h"

namespace py = pybind11;

namespace ssgd::python {
namespace {

nlohmann::json presets_json() {
  nlohmann::json out;
  nlohmann::json links = nlohmann::json::object();
  for (const auto& p : sim::link_presets()) {
    links[std::string(p.name)] = {{"class", sim::to_string(p.link_class)},
                                  {"bandwidth_bytes_per_s", p.bandwidth_bytes_per_s},
                                  {"latency_ns", p.latency.ns()},
                                  {"description", std::string(p.description)},
                                  {"source", std::string(p.source)}};
  }
  out["links"] = std::move(links);
  nlohmann::json platforms = nlohmann::json::object();
  for (const auto& p : sim::platform_presets()) {
    const sim::PlatformSpec spec = p.make();
    platforms[std::string(p.name)] = {{"description", spec.description},
                                      {"source", spec.source},
                                      {"gpus_per_node", spec.node.gpus},
                                      {"transport", sim::to_string(spec.transport)}};
  }
  out["platforms"] = std::move(platforms);
  out["collective_algorithms"] = sim::collective_algorithm_names();
  nlohmann::json policies = nlohmann::json::object();
  for (const auto& p : sim::overlap_policies()) {
    policies[std::string(p.name)] = {{"description", std::string(p.description)},
                                     {"source", std::string(p.source)}};
  }
  out["policies"] = std::move(policies);
  nlohmann::json keys = nlohmann::json::object();
  for (const auto& k : sim::scenario_keys()) {
    keys[std::string(k.path)] = {{"type", std::string(k.type)},
                                 {"default", std::string(k.default_text)},
                                 {"description", std::string(k.description)}};
  }
  out["scenario_keys"] = std::move(keys);
  return out;
}

}  // namespace

void bind_presets(py::module_& m) {
  m.def("_presets", [] { return json_text(presets_json()); });
}

}  // namespace ssgd::python
