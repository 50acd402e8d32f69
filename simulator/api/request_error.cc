#include "simulator/api/request_error.h"

#include <optional>
#include <string>

#include <fmt/format.h>

namespace ssgd::sim {

InputError request_error(std::string_view flag, std::string_view value, std::string_view reason) {
  // The value stands where a file would: bounded (short enough that, quoted,
  // InputLocation shows it as it is), then quoted.
  return InputError({fmt::format("'{}'", bounded(value, kMaxEchoBytes - 32)), std::nullopt,
                     std::nullopt, std::string(flag)},
                    std::string(reason));
}

InputError request_error(std::string_view flag, std::string_view reason) {
  return InputError({"command line", std::nullopt, std::nullopt, std::string(flag)},
                    std::string(reason));
}

}  // namespace ssgd::sim
