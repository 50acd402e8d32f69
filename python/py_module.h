#pragma once
// The parts of the extension `_ssgd` (docs/python.md), each binding one
// group of functions; module.cc makes the module and its exceptions.

#include <string>

#include <pybind11/pybind11.h>
#include <nlohmann/json.hpp>

namespace ssgd::python {

// Reports cross into Python as JSON text, parsed there by the json module:
// exactly what `--report` writes (invalid UTF-8 replaced), without the indent.
std::string json_text(const nlohmann::json& report);

void bind_simulate(pybind11::module_& m);  // Input, simulate, scale, optimize
void bind_presets(pybind11::module_& m);   // presets
void bind_trace(pybind11::module_& m);     // read_trace

}  // namespace ssgd::python
