#include "simulator/calibration/bounded_yaml.h"

#include <optional>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include "common/error.h"

namespace ssgd::sim {
namespace {

std::optional<std::int64_t> line_of(const YAML::Mark& mark) {
  if (mark.is_null() || mark.line < 0) return std::nullopt;
  return static_cast<std::int64_t>(mark.line) + 1;
}

// The two refusals, from the event pass and from the byte scan alike.
InputError too_many_values(const std::string& file, std::optional<std::int64_t> line,
                           std::string_view what) {
  return InputError(InputLocation{file, line, std::nullopt, ""},
                    fmt::format("more than {} YAML values; a {} holds far fewer (is this the "
                                "right file?)",
                                kMaxYamlValues, what));
}
InputError too_deep(const std::string& file, std::optional<std::int64_t> line, std::int64_t byte) {
  return InputError(
      InputLocation{file, line, std::nullopt, ""},
      fmt::format("YAML nested deeper than {} levels (byte {})", kMaxYamlDepth, byte));
}

// The values and the depth of `text`'s documents, as require_bounded_yaml
// says; throws the InputError at the first value past a limit.
class BoundedEvents : public YAML::EventHandler {
 public:
  BoundedEvents(const std::string& file, std::string_view what) : file_(file), what_(what) {}
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { value(mark); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { value(mark); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                const std::string&) override {
    value(mark);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    open(mark);
  }
  void OnSequenceEnd() override { --depth_; }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    open(mark);
  }
  void OnMapEnd() override { --depth_; }

 private:
  void value(const YAML::Mark& mark) {
    if (++values_ > kMaxYamlValues) throw too_many_values(file_, line_of(mark), what_);
  }
  void open(const YAML::Mark& mark) {
    value(mark);
    if (++depth_ > kMaxYamlDepth) {
      throw too_deep(file_, line_of(mark), mark.pos);
    }
  }
  const std::string& file_;
  std::string_view what_;
  std::int64_t values_ = 0;
  int depth_ = 0;
};

// The flow collections of `text` ("[", "{", ","), found by bytes: yaml-cpp's
// scanner reads a flow collection whole before it hands out its first event,
// so their nesting and size are bounded here, before any parser sees them.
// Quotes are followed where a scalar can start, comments skipped; a '[' in
// a plain scalar counts too (a scenario has none past these limits).
void require_bounded_flow(std::string_view text, const std::string& file, std::string_view what) {
  std::int64_t line = 1;
  std::int64_t values = 0;
  int depth = 0;
  char quote = 0;
  char before = '\n';
  for (std::size_t i = 0; i < text.size(); before = text[i], ++i) {
    const char c = text[i];
    if (c == '\n') ++line;
    if (quote != 0) {
      if (c == quote) quote = 0;
      continue;
    }
    const bool scalar_start = before == '\n' || before == ' ' || before == '\t' || before == '[' ||
                              before == '{' || before == ',' || before == ':';
    if (c == '#' && (before == '\n' || before == ' ' || before == '\t')) {
      while (i + 1 < text.size() && text[i + 1] != '\n') ++i;
      continue;
    }
    if ((c == '"' || c == '\'') && scalar_start) {
      quote = c;
      continue;
    }
    if (c == '[' || c == '{') {
      if (++depth > kMaxYamlDepth) throw too_deep(file, line, static_cast<std::int64_t>(i));
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
    if ((c == '[' || c == '{' || c == ',') && depth > 0 && ++values > kMaxYamlValues) {
      throw too_many_values(file, line, what);
    }
  }
}

}  // namespace

void require_bounded_yaml(const std::string& text, const std::string& file, std::string_view what) {
  require_bounded_flow(text, file, what);
  std::istringstream in(text);
  YAML::Parser parser(in);
  BoundedEvents events(file, what);
  try {
    // Two documents at most, as read_yaml_file counts them.
    for (int documents = 0; documents < 2 && parser.HandleNextDocument(events); ++documents) {
    }
  } catch (const YAML::Exception&) {
    // Not valid YAML: the parse that follows says where, in its words.
  }
}

}  // namespace ssgd::sim
