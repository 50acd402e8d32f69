#pragma once
// One spdlog logger per component ("traces", "dag", "sim", "tools", ...),
// all writing to stderr so that stdout stays for the program's own output.
// `--log component=level` on the command line sets their levels.

#include <spdlog/spdlog.h>

#include <memory>
#include <string>

namespace ssgd {

// The logger for `component`, created on first use.
std::shared_ptr<spdlog::logger> logger(const std::string& component);

// Applies a spec such as "info", "sim=debug" or "traces=warn,sim=trace".
// Throws std::invalid_argument on an unknown level.
void set_log_levels(const std::string& spec);

}  // namespace ssgd
