#pragma once
// Checks an output path before a command does any work: its folder must
// exist and it must not be a folder itself. Throws ssgd::InputError naming
// the path and the flag that gave it.

#include <filesystem>
#include <string>

#include "common/error.h"

namespace ssgd::tools {

inline void check_output_path(const std::string& path, const char* flag) {
  namespace fs = std::filesystem;
  if (path.empty()) return;
  const fs::path p(path);
  const fs::path parent = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  std::error_code ec;
  if (!fs::is_directory(parent, ec)) {
    throw InputError({path, std::nullopt, std::nullopt, flag},
                     "cannot write here: folder '" + parent.string() + "' does not exist");
  }
  if (fs::is_directory(p, ec)) {
    throw InputError({path, std::nullopt, std::nullopt, flag}, "cannot write here: is a folder");
  }
}

}  // namespace ssgd::tools
