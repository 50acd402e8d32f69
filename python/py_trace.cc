// ssgd.read_trace(path): the events of an ssgd trace (.ssgdt) as columns,
// read by the one trace reader (traces/trace_reader.h) with the GIL released.
// Names and kinds are returned as codes into small tables, so a trace of
// millions of events costs a few numbers per event, not a Python object.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "common/input_file.h"
#include "common/logging.h"
#include "python/py_module.h"
#include "traces/trace_reader.h"

namespace py = pybind11;

namespace ssgd::python {
namespace {

namespace v1 = ssgd::trace::v1;

// The payload kinds, in the order of codes in the `kind` column.
constexpr const char* kKinds[] = {
    "empty",  "kernel",   "memcpy",          "memset",     "collective",
    "marker", "api_call", "synchronization", "cuda_event", "external_correlation",
    "device", "link",     "graph_node"};

std::int8_t kind_code(v1::Event::PayloadCase c) {
  switch (c) {
    case v1::Event::kKernel: return 1;
    case v1::Event::kMemcpy: return 2;
    case v1::Event::kMemset: return 3;
    case v1::Event::kCollective: return 4;
    case v1::Event::kMarker: return 5;
    case v1::Event::kApiCall: return 6;
    case v1::Event::kSynchronization: return 7;
    case v1::Event::kCudaEvent: return 8;
    case v1::Event::kExternalCorrelation: return 9;
    case v1::Event::kDevice: return 10;
    case v1::Event::kLink: return 11;
    case v1::Event::kGraphNode: return 12;
    case v1::Event::PAYLOAD_NOT_SET: return 0;
  }
  return 0;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// The columns, filled without the GIL.
struct Columns {
  std::vector<std::int32_t> rank;
  std::vector<std::int8_t> kind;
  std::vector<std::int32_t> name;  // index in names
  std::vector<std::int32_t> device;
  std::vector<std::int64_t> stream;
  std::vector<std::int64_t> start_ns;
  std::vector<std::int64_t> end_ns;
  std::vector<std::int64_t> bytes;
  std::vector<std::string> names;
  std::unordered_map<std::string, std::int32_t> name_index;
  bool truncated = false;
  std::string truncation_warning;
  std::int32_t file_rank = 0;

  std::int32_t intern(const std::string& s) {
    const auto [it, added] = name_index.try_emplace(s, static_cast<std::int32_t>(names.size()));
    if (added) names.push_back(s);
    return it->second;
  }

  // One event: its name, device, stream, times and bytes where it has them
  // (-1 for no device or stream, 0 for no time or bytes).
  void add(const v1::Event& e) {
    std::string n;
    std::int32_t dev = -1;
    std::int64_t str = -1, start = 0, end = 0, size = 0;
    switch (e.payload_case()) {
      case v1::Event::kKernel: {
        const auto& k = e.kernel();
        n = k.name(), dev = k.device(), str = k.stream(), start = k.start_ns(), end = k.end_ns();
        break;
      }
      case v1::Event::kMemcpy: {
        const auto& c = e.memcpy();
        n = lower(v1::Memcpy::Kind_Name(c.kind()));
        dev = c.device(), str = c.stream(), start = c.start_ns(), end = c.end_ns();
        size = c.size_bytes();
        break;
      }
      case v1::Event::kMemset: {
        const auto& c = e.memset();
        n = "memset", dev = c.device(), str = c.stream(), start = c.start_ns(), end = c.end_ns();
        size = c.size_bytes();
        break;
      }
      case v1::Event::kCollective: {
        const auto& c = e.collective();
        n = lower(v1::Collective::Op_Name(c.op()));
        dev = c.device(), str = c.stream(), start = c.start_ns(), end = c.end_ns();
        size = c.size_bytes();
        break;
      }
      case v1::Event::kMarker: {
        const auto& c = e.marker();
        n = c.name(), start = c.start_ns(), end = c.end_ns();
        break;
      }
      case v1::Event::kApiCall: {
        const auto& c = e.api_call();
        n = c.name(), start = c.start_ns(), end = c.end_ns();
        break;
      }
      case v1::Event::kSynchronization: {
        const auto& c = e.synchronization();
        n = lower(v1::Synchronization::Kind_Name(c.kind()));
        dev = c.device(), str = c.stream(), start = c.start_ns(), end = c.end_ns();
        break;
      }
      case v1::Event::kCudaEvent: {
        const auto& c = e.cuda_event();
        n = "cuda_event", dev = c.device(), str = c.stream();
        start = end = c.timestamp_ns();
        break;
      }
      case v1::Event::kExternalCorrelation:
        n = lower(v1::ExternalCorrelation::Kind_Name(e.external_correlation().kind()));
        break;
      case v1::Event::kDevice: n = e.device().name(), dev = e.device().device_id(); break;
      case v1::Event::kLink: n = lower(v1::Link::Kind_Name(e.link().kind())); break;
      case v1::Event::kGraphNode: {
        const auto& g = e.graph_node();
        n = g.name(), start = g.start_ns(), end = g.end_ns(), size = g.size_bytes();
        break;
      }
      case v1::Event::PAYLOAD_NOT_SET: break;
    }
    rank.push_back(e.rank());
    kind.push_back(kind_code(e.payload_case()));
    name.push_back(intern(n));
    device.push_back(dev);
    stream.push_back(str);
    start_ns.push_back(start);
    end_ns.push_back(end);
    bytes.push_back(size);
  }
};

Columns read_columns(const std::string& path, bool allow_truncated) {
  require_regular_file(path, "PATH");
  Columns c;
  auto reader = trace::TraceReader::open(path);
  c.file_rank = reader.metadata().rank();
  v1::Event e;
  while (reader.next(e)) c.add(e);
  if (reader.truncated()) {
    if (!allow_truncated) {
      throw trace::truncated_trace_error(
          reader, "; pass allow_truncated=True to read the events before the cut");
    }
    c.truncated = true;
    c.truncation_warning = reader.truncation_warning();
  }
  return c;
}

template <typename T>
py::array_t<T> to_array(std::vector<T>&& v) {
  auto* owned = new std::vector<T>(std::move(v));
  py::capsule free(owned, [](void* p) { delete static_cast<std::vector<T>*>(p); });
  return py::array_t<T>({static_cast<py::ssize_t>(owned->size())}, {sizeof(T)}, owned->data(),
                        free);
}

py::dict read_trace(const std::string& path, bool allow_truncated) {
  Columns c;
  {
    py::gil_scoped_release release;
    c = read_columns(path, allow_truncated);
  }
  py::dict out;
  std::vector<std::int64_t> duration(c.start_ns.size());
  for (std::size_t i = 0; i < duration.size(); ++i) duration[i] = c.end_ns[i] - c.start_ns[i];
  out["rank"] = to_array(std::move(c.rank));
  out["kind_code"] = to_array(std::move(c.kind));
  out["name_code"] = to_array(std::move(c.name));
  out["device"] = to_array(std::move(c.device));
  out["stream"] = to_array(std::move(c.stream));
  out["start_ns"] = to_array(std::move(c.start_ns));
  out["end_ns"] = to_array(std::move(c.end_ns));
  out["duration_ns"] = to_array(std::move(duration));
  out["bytes"] = to_array(std::move(c.bytes));
  py::list kinds;
  for (const char* k : kKinds) kinds.append(k);
  out["kinds"] = kinds;
  py::list names;
  for (const std::string& n : c.names) {
    // Names come from outside: invalid UTF-8 is replaced, not an error.
    names.append(py::reinterpret_steal<py::str>(
        PyUnicode_DecodeUTF8(n.data(), static_cast<py::ssize_t>(n.size()), "replace")));
  }
  out["names"] = names;
  out["truncated"] = c.truncated;
  out["truncation_warning"] = c.truncation_warning;
  out["file_rank"] = c.file_rank;
  return out;
}

}  // namespace

void bind_trace(py::module_& m) {
  m.def("_read_trace", &read_trace, py::arg("path"), py::arg("allow_truncated") = false);
}

}  // namespace ssgd::python
