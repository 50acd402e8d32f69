#include "common/logging.h"

#include <spdlog/sinks/stdout_color_sinks.h>

#include <mutex>
#include <sstream>
#include <stdexcept>

#include "common/error.h"

namespace ssgd {
namespace {

std::mutex g_mutex;
spdlog::level::level_enum g_default_level = spdlog::level::info;

spdlog::level::level_enum parse_level(const std::string& s) {
  const auto level = spdlog::level::from_str(s);
  if (level == spdlog::level::off && s != "off") {
    throw std::invalid_argument("unknown log level '" + bounded(s) +
                                "' (use trace, debug, info, warn, error, critical or off)");
  }
  return level;
}

}  // namespace

std::shared_ptr<spdlog::logger> logger(const std::string& component) {
  std::lock_guard lock(g_mutex);
  if (auto existing = spdlog::get(component)) return existing;
  auto created = spdlog::stderr_color_mt(component);
  created->set_pattern("%^%l%$ [%n] %v");
  created->set_level(g_default_level);
  return created;
}

void set_log_levels(const std::string& spec) {
  std::stringstream ss(spec);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    const auto eq = item.find('=');
    if (eq == std::string::npos) {
      const auto level = parse_level(item);
      {
        std::lock_guard lock(g_mutex);
        g_default_level = level;
      }
      spdlog::apply_all([level](const std::shared_ptr<spdlog::logger>& l) { l->set_level(level); });
    } else {
      const auto level = parse_level(item.substr(eq + 1));
      logger(item.substr(0, eq))->set_level(level);
    }
  }
}

}  // namespace ssgd
