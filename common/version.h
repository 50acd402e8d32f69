#pragma once
// The version of ssgd, from the project() call in the top CMakeLists.txt, for
// `ssgd --version` and for what ssgd writes into its outputs.

#include <string_view>

namespace ssgd {

// "0.1.0": major.minor.patch, as CMake's PROJECT_VERSION.
std::string_view ssgd_version();

}  // namespace ssgd
