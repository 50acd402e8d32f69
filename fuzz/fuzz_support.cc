#include "fuzz/fuzz_support.h"

#include <cxxabi.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <system_error>
#include <typeinfo>

#include "common/logging.h"

namespace ssgd::fuzz {
namespace fs = std::filesystem;

void finding(const std::string& what) {
  std::fprintf(stderr, "\nssgd fuzz finding: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

namespace {

fs::path make_scratch_dir() {
  fs::path base;
  if (const char* dir = std::getenv("SSGD_FUZZ_TMP"); dir != nullptr && *dir != '\0') {
    base = dir;
  } else {
    std::error_code ec;
    base = fs::is_directory("/dev/shm", ec) ? fs::path("/dev/shm") : fs::temp_directory_path();
  }
  fs::path dir = base / ("ssgd-fuzz-" + std::to_string(::getpid()));
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir, ec);
  if (ec) finding("cannot create the scratch folder " + dir.string() + ": " + ec.message());
  return dir;
}

struct ScratchDir {
  fs::path path = make_scratch_dir();
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

}  // namespace

const fs::path& scratch_dir() {
  static const ScratchDir dir;
  return dir.path;
}

fs::path scratch(std::string_view name) { return scratch_dir() / fs::path(name); }

fs::path write_scratch(std::string_view name, std::string_view text) {
  fs::path path = scratch(name);
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out) finding("cannot write the scratch file " + path.string());
  return path;
}

SplitInput split_at_marker_line(std::string_view text, std::string_view marker) {
  std::size_t at = text.starts_with(marker) ? 0 : text.find("\n" + std::string(marker));
  if (at == std::string_view::npos) return {text, std::nullopt};
  if (at > 0) ++at;  // keep the first part's last newline
  return {text.substr(0, at), text.substr(at + marker.size())};
}

fs::path write_scratch(std::string_view name, const std::uint8_t* data, std::size_t size) {
  return write_scratch(name, std::string_view(reinterpret_cast<const char*>(data), size));
}

void clear_scratch() {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(scratch_dir(), ec))
    fs::remove_all(entry.path(), ec);
}

std::vector<std::string> scratch_files() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::recursive_directory_iterator(scratch_dir(), ec)) {
    names.push_back(fs::relative(entry.path(), scratch_dir(), ec).string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

void expect_scratch_files(std::string_view what, std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  const std::vector<std::string> found = scratch_files();
  if (found == names) return;
  std::string listed;
  for (const auto& name : found) listed += " " + name;
  finding(std::string(what) + ": the scratch folder holds" +
          (listed.empty() ? " nothing" : listed) + ", expected only the input");
}

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) finding("cannot read " + path.string());
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void check_input_error(std::string_view what, std::initializer_list<std::string> files,
                       const InputError& error) {
  const std::string& file = error.where().file;
  if (file.empty()) {
    finding(std::string(what) + ": an InputError that names no file: " + error.what());
  }
  if (files.size() > 0 && std::find(files.begin(), files.end(), file) == files.end()) {
    std::string expected;
    for (const auto& f : files) expected += (expected.empty() ? "" : " or ") + f;
    finding(std::string(what) + ": an InputError naming '" + file + "' instead of " + expected +
            ": " + error.what());
  }
  if (error.reason().empty()) {
    finding(std::string(what) + ": an InputError without a reason: " + error.what());
  }
}

namespace {

std::string type_name(const std::exception& error) {
  const char* mangled = typeid(error).name();
  int status = 0;
  const std::unique_ptr<char, decltype(&std::free)> name(
      abi::__cxa_demangle(mangled, nullptr, nullptr, &status), &std::free);
  return status == 0 && name ? name.get() : mangled;
}

}  // namespace

void unexpected_exception(std::string_view what, const std::exception* error) {
  if (error == nullptr) finding(std::string(what) + ": threw something that is not an exception");
  finding(std::string(what) + ": threw " + type_name(*error) +
          " instead of ssgd::InputError: " + error->what());
}

void step_failed(std::string_view what, const std::exception* error) {
  if (error == nullptr) finding(std::string(what) + ": threw something that is not an exception");
  finding(std::string(what) + " failed (" + type_name(*error) + "): " + error->what());
}

}  // namespace ssgd::fuzz

// libFuzzer calls it once, before the first input, in every target: each
// links this file. The loggers are turned off: the readers' warnings would
// only slow fuzzing down.
extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  ssgd::set_log_levels("off");
  return 0;
}
