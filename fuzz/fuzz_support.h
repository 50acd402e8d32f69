#pragma once
// What every fuzz target shares (docs/reliability.md): a scratch folder for
// the files a reader needs, and the check of the readers' promise.
//
// The promise of every reader of outside input: it returns a value, or it
// throws ssgd::InputError whose location names the file it read (and whose
// reason is not empty). Any other exception, and an InputError naming no
// file, is a finding: the target prints what happened and aborts, so
// libFuzzer saves the input. Targets add their own checks (what was
// accepted can be written back and read back equal) through finding().

#include <cstddef>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"

namespace ssgd::fuzz {

// Prints "ssgd fuzz finding: <what>" on stderr and aborts.
[[noreturn]] void finding(const std::string& what);

// The folder this process reads and writes its files in: $SSGD_FUZZ_TMP, else
// /dev/shm, else the system's temporary folder, with "ssgd-fuzz-<pid>" added;
// created on first use and removed at a normal exit.
const std::filesystem::path& scratch_dir();

// scratch_dir() / name.
std::filesystem::path scratch(std::string_view name);

// Writes `size` bytes to scratch(name), replacing it; returns the path.
std::filesystem::path write_scratch(std::string_view name, const std::uint8_t* data,
                                    std::size_t size);
std::filesystem::path write_scratch(std::string_view name, std::string_view text);

// An input in two parts: `text` up to the first line that is exactly
// `marker` ("#--set\n", with its newline), and what follows that line, if
// the marker is there (the first part keeps its last newline).
struct SplitInput {
  std::string_view head;
  std::optional<std::string_view> tail;
};
SplitInput split_at_marker_line(std::string_view text, std::string_view marker);

// Removes every file of scratch_dir(), so that one input's files never meet
// the next one's.
void clear_scratch();

// The names of the files in scratch_dir(), sorted.
std::vector<std::string> scratch_files();

// A finding unless the files of scratch_dir() are exactly `names`: a run
// that failed must leave no output, not even a temporary file.
void expect_scratch_files(std::string_view what, std::vector<std::string> names);

// The whole file, as bytes; a finding when it cannot be read.
std::string read_bytes(const std::filesystem::path& path);

// Runs `read`. True when it returned; false when it threw an InputError that
// keeps the promise: a non-empty reason and a location whose file is one of
// `files` (any non-empty file when `files` is empty). Every other outcome
// is a finding naming `what`.
template <typename F>
bool accepts(std::string_view what, std::initializer_list<std::string> files, F&& read);

// The check accepts() makes of an InputError; a finding when it fails.
void check_input_error(std::string_view what, std::initializer_list<std::string> files,
                       const InputError& error);
// The finding for any other exception: `what` threw `error` (null: something
// that is not a std::exception) where only an InputError may come out.
[[noreturn]] void unexpected_exception(std::string_view what, const std::exception* error);
// The finding for a step that must succeed and threw.
[[noreturn]] void step_failed(std::string_view what, const std::exception* error);

template <typename F>
bool accepts(std::string_view what, std::initializer_list<std::string> files, F&& read) {
  try {
    read();
    return true;
  } catch (const InputError& error) {
    check_input_error(what, files, error);
    return false;
  } catch (const std::exception& error) {
    unexpected_exception(what, &error);
  } catch (...) {
    unexpected_exception(what, nullptr);
  }
}

// Runs `step`, a step that must succeed (writing back what a reader
// accepted, reading back what was written); any exception is a finding.
template <typename F>
void must(std::string_view what, F&& step) {
  try {
    step();
  } catch (const std::exception& error) {
    step_failed(what, &error);
  } catch (...) {
    step_failed(what, nullptr);
  }
}

}  // namespace ssgd::fuzz
