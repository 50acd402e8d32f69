#pragma once
// The error of a bad value in a request of the facade (scale, optimize),
// named as the command line names it: the flag that takes the value
// (`--gpus`) and the value, as tools/ssgd/cli_options.h's flag_error does, so
// that `ssgd scale` and the Python module say the same thing.

#include <string_view>

#include "common/error.h"

namespace ssgd::sim {

// "'VALUE': FLAG: REASON".
[[nodiscard]] InputError request_error(std::string_view flag, std::string_view value,
                                       std::string_view reason);

// "command line: FLAG: REASON", for a value that is missing.
[[nodiscard]] InputError request_error(std::string_view flag, std::string_view reason);

}  // namespace ssgd::sim
