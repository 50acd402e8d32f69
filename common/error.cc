#include "common/error.h"

namespace ssgd {

std::string InputLocation::to_string() const {
  std::string s = file.empty() ? std::string("<input>") : file;
  if (line) s += ":" + std::to_string(*line);
  if (record) s += ": record " + std::to_string(*record);
  if (!field.empty()) s += ": field '" + field + "'";
  return s;
}

InputError::InputError(InputLocation where, const std::string& what)
    : std::runtime_error(where.to_string() + ": " + what), where_(std::move(where)), reason_(what) {}

ParameterError::ParameterError(std::string key, const std::string& what)
    : std::invalid_argument(what), key_(std::move(key)) {}

}  // namespace ssgd
