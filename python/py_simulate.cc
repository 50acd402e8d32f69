// ssgd.Input, ssgd.simulate, ssgd.scale and ssgd.optimize: the facade of
// simulator/api/ (the code `ssgd simulate`, `ssgd scale` and `ssgd optimize`
// run), with the GIL released while it reads and replays.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "common/input_file.h"
#include "common/logging.h"
#include "python/py_module.h"
#include "simulator/api/optimize.h"
#include "simulator/api/scale.h"
#include "simulator/api/simulation.h"
#include "simulator/input/scenario_inputs.h"
#include "presentation/report/optimize_report.h"
#include "presentation/report/scale_report.h"
#include "presentation/report/simulation_report.h"
#include "simulator/scenario/scenario.h"

namespace py = pybind11;

namespace ssgd::python {
namespace {

// An input read and checked once (ssgd.load), for many runs.
struct Input {
  std::shared_ptr<const sim::SimulationInput> loaded;
  bool allow_truncated = false;
};

void warn(const std::string& line) { logger("python")->warn("{}", line); }
void info(const std::string& line) { logger("python")->info("{}", line); }

Input load_input(const std::string& path, bool allow_truncated) {
  require_regular_file(path, "INPUT");
  auto loaded =
      std::make_shared<sim::SimulationInput>(sim::load_simulation_input(path, allow_truncated));
  for (const auto& w : loaded->content.warnings) warn(w);
  return {std::move(loaded), allow_truncated};
}

// The scenario: the file (if any), then every set in order, as --scenario and
// --set give it. `refuse_jobs` names the function that replays one job only.
sim::Scenario load_scenario(const std::optional<std::string>& file,
                            const std::vector<std::string>& sets, const char* refuse_jobs) {
  if (file && !file->empty()) require_regular_file(*file, "--scenario");
  const std::optional<std::filesystem::path> path =
      file && !file->empty() ? std::optional<std::filesystem::path>(*file) : std::nullopt;
  sim::Scenario scenario = sim::load_scenario(path, sets);
  if (refuse_jobs != nullptr) {
    sim::refuse_scenario_jobs(scenario, path ? *file : std::string(), sets,
                              std::string("ssgd.") + refuse_jobs, "ssgd.simulate");
  }
  return scenario;
}

std::string simulate(const Input& in, const std::optional<std::string>& scenario_file,
                     const std::vector<std::string>& sets, bool allow_large, bool fold_ranks) {
  py::gil_scoped_release release;
  const sim::Scenario scenario = load_scenario(scenario_file, sets, nullptr);
  sim::SimulationOptions options;
  options.scenario_file = scenario_file.value_or("");
  options.scenario_sets = sets;
  options.replay.progress = true;
  options.replay.fold_ranks = fold_ranks;
  options.replay.allow_large = allow_large;
  options.allow_truncated = in.allow_truncated;
  options.warn = warn;
  options.info = info;
  const sim::Simulation simulation = sim::run_simulation(*in.loaded, scenario, options);
  return json_text(report::simulation_report(simulation));
}

std::string scale(const Input& in, const std::optional<std::string>& scenario_file,
                  const std::vector<std::string>& sets, const std::string& gpus,
                  const std::string& mode, const std::string& global_batch, bool allow_large) {
  py::gil_scoped_release release;
  const sim::ScaleFlags flags = sim::check_scale_request({gpus, mode, global_batch});
  sim::ScaleOptions options;
  options.scenario_file = scenario_file.value_or("");
  options.scenario_sets = sets;
  options.allow_large = allow_large;
  options.warn = warn;
  options.info = info;
  const sim::Scenario base =
      sim::scale_base_scenario(load_scenario(scenario_file, sets, "scale"), flags, options);
  const sim::ScaleRun run = sim::run_scale(*in.loaded, base, flags, options);
  return json_text(report::scale_report_json(run.result));
}

std::string optimize(const Input& in, const std::optional<std::string>& scenario_file,
                     const std::vector<std::string>& sets, const std::string& param,
                     const std::string& values, const std::string& from, const std::string& to,
                     std::int64_t points, bool linear, bool allow_large,
                     const std::vector<std::string>& also) {
  py::gil_scoped_release release;
  const sim::OptimizePlan plan = sim::plan_optimize(
      {param, values, from, to, points, linear, also}, [&](const std::vector<std::string>& more_sets) {
        std::vector<std::string> all = sets;
        all.insert(all.end(), more_sets.begin(), more_sets.end());
        return load_scenario(scenario_file, all, "optimize");
      });
  sim::OptimizeOptions options;
  options.scenario_file = scenario_file.value_or("");
  options.scenario_sets = sets;
  options.allow_large = allow_large;
  options.info = info;
  const sim::OptimizeRun run = sim::run_optimize(*in.loaded, plan, options);
  return json_text(report::optimize_report_json(run.result));
}

}  // namespace

void bind_simulate(py::module_& m) {
  py::class_<Input>(m, "Input",
                    "An input of ssgd (an ssgd trace, a layer-profile CSV, a B-Caffe log or a "
                    "trace of an execution graph), read and checked once")
      .def(py::init([](const std::string& path, bool allow_truncated) {
             py::gil_scoped_release release;
             return load_input(path, allow_truncated);
           }),
           py::arg("path"), py::arg("allow_truncated") = false)
      .def_property_readonly("path", [](const Input& in) { return in.loaded->path; })
      .def_property_readonly(
          "kind",
          [](const Input& in) { return std::string(sim::to_string(in.loaded->content.kind)); })
      .def_property_readonly("model",
                             [](const Input& in) { return in.loaded->content.profile.model; })
      .def_property_readonly("warnings",
                             [](const Input& in) { return in.loaded->content.warnings; })
      .def_property_readonly("allow_truncated", [](const Input& in) { return in.allow_truncated; });
  m.def("_simulate", &simulate, py::arg("input"), py::arg("scenario"), py::arg("sets"),
        py::arg("allow_large"), py::arg("fold_ranks"));
  m.def("_scale", &scale, py::arg("input"), py::arg("scenario"), py::arg("sets"), py::arg("gpus"),
        py::arg("mode"), py::arg("global_batch"), py::arg("allow_large"));
  m.def("_optimize", &optimize, py::arg("input"), py::arg("scenario"), py::arg("sets"),
        py::arg("param"), py::arg("values"), py::arg("from_"), py::arg("to"), py::arg("points"),
        py::arg("linear"), py::arg("allow_large"), py::arg("also"));
}

}  // namespace ssgd::python
