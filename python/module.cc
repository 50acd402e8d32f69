// The extension `_ssgd` of the Python module `ssgd` (docs/python.md): the
// exceptions, the version and the log level; the functions are bound by the
// files beside this one. ssgd/__init__.py wraps them for users.
#include <Python.h>

#include <exception>
#include <new>
#include <string>

#include <pybind11/pybind11.h>

#include "common/error.h"
#include "common/logging.h"
#include "common/version.h"
#include "python/py_module.h"

namespace py = pybind11;

namespace ssgd::python {

std::string json_text(const nlohmann::json& report) {
  return report.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace ssgd::python

PYBIND11_MODULE(_ssgd, m) {
  m.doc() = "ssgd's C++ core; use the package `ssgd` (docs/python.md)";

  // ssgd.Error (RuntimeError): any failure; ssgd.InputError (ssgd.Error and
  // ValueError): bad input, with the message the command line prints after
  // "ssgd: error: ". Kept for the life of the process, as modules are.
  static PyObject* error = PyErr_NewException("ssgd.Error", PyExc_RuntimeError, nullptr);
  PyObject* input_bases = PyTuple_Pack(2, error, PyExc_ValueError);
  static PyObject* input_error = PyErr_NewException("ssgd.InputError", input_bases, nullptr);
  Py_DECREF(input_bases);
  if (error == nullptr || input_error == nullptr) throw py::error_already_set();
  m.attr("Error") = py::handle(error);
  m.attr("InputError") = py::handle(input_error);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const py::builtin_exception&) {
      throw;  // pybind11's own, for its translator
    } catch (const py::error_already_set&) {
      throw;
    } catch (const std::bad_alloc&) {
      throw;  // MemoryError
    } catch (const ssgd::InputError& e) {
      PyErr_SetString(input_error, e.what());
    } catch (const std::exception& e) {
      PyErr_SetString(error, e.what());
    }
  });

  // The C++ side logs to stderr; a program that imports ssgd sees its
  // warnings only, unless it asks for more.
  ssgd::set_log_levels("warn");
  m.def(
      "set_log_level",
      [](const std::string& spec) {
        try {
          ssgd::set_log_levels(spec);
        } catch (const std::invalid_argument& e) {
          throw py::value_error(e.what());
        }
      },
      py::arg("spec"),
      "Sets the C++ side's log level: 'info', 'debug', 'warn', 'error', 'off', or per "
      "component as `ssgd --log` takes it ('sim=debug,tools=info').");
  m.attr("__version__") = std::string(ssgd::ssgd_version());

  ssgd::python::bind_simulate(m);
  ssgd::python::bind_presets(m);
  ssgd::python::bind_trace(m);
}
