#pragma once
// The event queue ran dry while tasks were still waiting: the report names
// them and what each was waiting for, instead of a hang.

#include <stdexcept>

namespace ssgd::sim {

class DeadlockError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace ssgd::sim
