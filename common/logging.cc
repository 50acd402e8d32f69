#include "common/logging.h"

#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>

#include <algorithm>
#include <cctype>
#include <iostream>
#include <map>
#include <optional>
#include <string_view>
#include <utility>

#include <mutex>
#include <sstream>
#include <stdexcept>

#include "common/error.h"
#include "common/run_indexed.h"

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

struct FoldedWarnings::Held {
  std::mutex mutex;
  struct Kind {
    std::string component;
    std::string level;  // as spdlog names it: warning, error, critical
    std::string first;
    std::size_t count = 0;
    // Where `first` came: (1 + its run_indexed item, or 0 outside one; its
    // arrival). The least is kept and kinds are printed in its order, so
    // items run on several threads fold as they would on one.
    std::pair<std::size_t, std::size_t> order;
  };
  std::vector<Kind> kinds;
  std::size_t arrivals = 0;
  std::map<std::string, std::size_t> by_key;
};

namespace {

// Warnings and worse go to `held`; the rest to the logger's own sinks.
class FoldingSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  FoldingSink(std::shared_ptr<FoldedWarnings::Held> held, std::string component,
              std::vector<spdlog::sink_ptr> through)
      : held_(std::move(held)), component_(std::move(component)), through_(std::move(through)) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    if (msg.level < spdlog::level::warn) {
      for (auto& s : through_) {
        if (s->should_log(msg.level)) s->log(msg);
      }
      return;
    }
    std::string text(msg.payload.data(), msg.payload.size());
    const std::string key = component_ + "\n" + FoldedWarnings::kind_of(text);
    const std::optional<std::size_t> item = current_run_index();
    std::lock_guard lock(held_->mutex);
    const std::pair<std::size_t, std::size_t> order{item ? *item + 1 : 0, held_->arrivals++};
    auto [it, fresh] = held_->by_key.emplace(key, held_->kinds.size());
    if (fresh) {
      const auto level = spdlog::level::to_string_view(msg.level);
      held_->kinds.push_back(
          {component_, std::string(level.data(), level.size()), std::move(text), 0, order});
    } else if (order < held_->kinds[it->second].order) {
      held_->kinds[it->second].first = std::move(text);
      held_->kinds[it->second].order = order;
    }
    ++held_->kinds[it->second].count;
  }
  void flush_() override {
    for (auto& s : through_) s->flush();
  }

 private:
  std::shared_ptr<FoldedWarnings::Held> held_;
  std::string component_;
  std::vector<spdlog::sink_ptr> through_;
};

}  // namespace

std::string FoldedWarnings::kind_of(const std::string& message) {
  std::string_view m = message;
  // Leading "NAME: " prefixes of one word: a case, a path.
  while (true) {
    const auto colon = m.find(": ");
    if (colon == std::string_view::npos || colon == 0) break;
    if (m.substr(0, colon).find(' ') != std::string_view::npos) break;
    m.remove_prefix(colon + 2);
  }
  if (const auto paren = m.find(" ("); paren != std::string_view::npos) m = m.substr(0, paren);
  std::string key;
  for (const char c : m) {
    if (!std::isdigit(static_cast<unsigned char>(c))) key += c;
  }
  return key;
}

FoldedWarnings::FoldedWarnings(std::vector<std::string> components)
    : held_(std::make_shared<Held>()) {
  for (const std::string& c : components) {
    auto l = logger(c);
    std::vector<spdlog::sink_ptr> own = l->sinks();
    l->sinks() = {std::make_shared<FoldingSink>(held_, c, own)};
    saved_.emplace_back(std::move(l), std::move(own));
  }
}

FoldedWarnings::~FoldedWarnings() {
  try {
    flush();
  } catch (...) {  // a destructor prints what it can and never throws
  }
}

void FoldedWarnings::flush() {
  for (auto& [l, sinks] : saved_) l->sinks() = sinks;
  saved_.clear();
  std::lock_guard lock(held_->mutex);
  std::sort(held_->kinds.begin(), held_->kinds.end(),
            [](const Held::Kind& a, const Held::Kind& b) { return a.order < b.order; });
  for (const auto& k : held_->kinds) {
    std::cerr << k.level << " [" << k.component << "] " << k.first;
    if (k.count > 1) std::cerr << " (and " << (k.count - 1) << " more like it)";
    std::cerr << "\n";
  }
  held_->kinds.clear();
  held_->by_key.clear();
}

}  // namespace ssgd
