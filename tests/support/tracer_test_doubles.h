#pragma once
// Stand-ins the tracer's tests share: an environment read from a map
// instead of the process's, and a clock server on the loopback whose clock
// runs a known offset ahead of this host's.

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "tracer/core/clock_exchange.h"
#include "tracer/core/rank_env.h"

namespace ssgd::testing {

// An EnvLookup that sees exactly `values`.
inline tracer::EnvLookup map_env(std::map<std::string, std::string> values) {
  return [values = std::move(values)](const char* name) -> std::optional<std::string> {
    const auto it = values.find(name);
    if (it == values.end()) return std::nullopt;
    return it->second;
  };
}

// A ClockServer named `name` whose clock is this host's event clock plus
// `shift_ns`; a failure to start is a test failure (and nullptr).
inline std::unique_ptr<tracer::ClockServer> shifted_clock_server(std::int64_t shift_ns,
                                                                 const std::string& name) {
  tracer::ClockServerOptions o;
  o.clock = [shift_ns] { return tracer::read_event_clock_ns() + shift_ns; };
  o.hostname = name;
  std::string error;
  auto server = tracer::ClockServer::start(std::move(o), &error);
  EXPECT_TRUE(server) << error;
  return server;
}

}  // namespace ssgd::testing
