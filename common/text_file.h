#pragma once
// Reads a whole input file into memory for the text readers (CSV, logs).

#include <filesystem>
#include <string>

namespace ssgd {

// Throws ssgd::InputError naming the file when it is missing, a directory or
// unreadable; `what` names the kind of input ("layer profile", ...).
std::string read_text_file(const std::filesystem::path& path, const std::string& what);

}  // namespace ssgd
