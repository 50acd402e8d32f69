#pragma once
// One spdlog logger per component ("traces", "dag", "sim", "tools", ...),
// all writing to stderr so that stdout stays for the program's own output.
// `--log component=level` on the command line sets their levels.

#include <spdlog/spdlog.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace ssgd {

// The logger for `component`, created on first use.
std::shared_ptr<spdlog::logger> logger(const std::string& component);

// Applies a spec such as "info", "sim=debug" or "traces=warn,sim=trace".
// Throws std::invalid_argument on an unknown level.
void set_log_levels(const std::string& spec);

// While alive, the warnings of `components` are held back and folded by
// kind (the message without its leading "NAME: " prefixes of one word, such
// as a case or a path, up to its first " (", digits ignored); destroyed (or
// flush()), each kind is printed once, the first message in full with how
// many more there were: "warning [sim] <message> (and 44 more like it)".
// Lower levels pass through. For commands that run many cases alike.
class FoldedWarnings {
 public:
  explicit FoldedWarnings(std::vector<std::string> components);
  ~FoldedWarnings();
  FoldedWarnings(const FoldedWarnings&) = delete;
  FoldedWarnings& operator=(const FoldedWarnings&) = delete;
  // Prints what was held and gives the loggers their sinks back.
  void flush();
  // The key a message folds under (public for tests).
  static std::string kind_of(const std::string& message);
  struct Held;  // what was held back (logging.cc)

 private:
  std::shared_ptr<Held> held_;
  std::vector<std::pair<std::shared_ptr<spdlog::logger>, std::vector<spdlog::sink_ptr>>> saved_;
};

}  // namespace ssgd
