#include "common/version.h"

#ifndef SSGD_VERSION_STRING
#error "SSGD_VERSION_STRING is set by common/CMakeLists.txt from PROJECT_VERSION"
#endif

namespace ssgd {

std::string_view ssgd_version() { return SSGD_VERSION_STRING; }

}  // namespace ssgd
