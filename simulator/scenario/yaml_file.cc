#include "simulator/scenario/yaml_file.h"

#include <fstream>
#include <sstream>
#include <system_error>
#include <vector>

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>

#include "common/error.h"
#include "common/input_file.h"
#include "common/utf8.h"
#include "common/work_context.h"
#include "simulator/calibration/bounded_yaml.h"

namespace ssgd::sim {
namespace {

// Counts the YAML documents of `text`, stopping at two: a parser fed events
// it ignores, so that nothing is built and a stream that would yield
// documents without end is cut off.
int count_yaml_documents(const std::string& text) {
  class Ignore : public YAML::EventHandler {
   public:
    void OnDocumentStart(const YAML::Mark&) override {}
    void OnDocumentEnd() override {}
    void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
    void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
    void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  const std::string&) override {}
    void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                         YAML::EmitterStyle::value) override {}
    void OnSequenceEnd() override {}
    void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                    YAML::EmitterStyle::value) override {}
    void OnMapEnd() override {}
  };
  std::istringstream in(text);
  YAML::Parser parser(in);
  Ignore ignore;
  int documents = 0;
  while (documents < 2 && parser.HandleNextDocument(ignore)) ++documents;
  return documents;
}

// Every scalar of `root`, keys too, is valid UTF-8, or an InputError names
// its line: yaml-cpp may turn valid text into bytes that are not. Walked
// with a stack of its own, so deep nesting cannot exhaust the call stack.
void require_utf8_scalars(const YAML::Node& root, const std::string& file) {
  std::vector<YAML::Node> pending{root};
  while (!pending.empty()) {
    const YAML::Node node = pending.back();
    pending.pop_back();
    if (node.IsScalar()) {
      if (const std::string problem = utf8_problem(node.Scalar()); !problem.empty()) {
        throw InputError(InputLocation{file, yaml_line(node.Mark()), std::nullopt, ""},
                         "a value, once its escapes are read, " + problem);
      }
    } else if (node.IsSequence()) {
      for (const auto& item : node) pending.push_back(item);
    } else if (node.IsMap()) {
      for (const auto& entry : node) {
        pending.push_back(entry.first);
        pending.push_back(entry.second);
      }
    }
  }
}

}  // namespace

std::optional<std::int64_t> yaml_line(const YAML::Mark& mark) {
  if (mark.is_null() || mark.line < 0) return std::nullopt;
  return static_cast<std::int64_t>(mark.line) + 1;
}

std::string describe_yaml_node(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: return "a mapping";
    case YAML::NodeType::Sequence: return "a sequence";
    case YAML::NodeType::Scalar: return fmt::format("the scalar '{}'", bounded(node.Scalar(), 80));
    case YAML::NodeType::Null: return "nothing (null)";
    case YAML::NodeType::Undefined: break;
  }
  return "nothing";
}

YAML::Node read_yaml_file(const std::filesystem::path& path, std::string_view what,
                          std::string_view empty_hint) {
  const std::string file = path.string();
  const WorkContext context("reading", file, "YAML");
  const InputLocation whole_file{file, std::nullopt, std::nullopt, ""};
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw InputError(whole_file, fmt::format("is a directory, not a {}", what));
  }
  require_regular_file(path, "");
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const std::string reason = std::filesystem::exists(path, ec) ? "permission denied or unreadable"
                                                                 : "no such file";
    throw InputError(whole_file, fmt::format("cannot open the {}: {}", what, reason));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError(whole_file, fmt::format("cannot read the {}", what));

  // Names and paths from the file reach reports and traces, which are
  // UTF-8: a file that is not is refused at its first bad byte.
  require_utf8_text(text.view(), file, fmt::format("the {}", what));
  require_no_control_characters(text.view(), file, fmt::format("the {}", what));
  YAML::Node document;
  int documents = 0;
  try {
    // YAML::Load first: yaml-cpp 0.7's LoadAll loops without end, allocating,
    // on a document that starts with ',' (found by fuzz/scenario_yaml_fuzzer),
    // which Load refuses. Then the documents are counted, two at most.
    require_bounded_yaml(text.str(), file, what);
    document = YAML::Load(text.str());
    documents = count_yaml_documents(text.str());
    if (documents == 1) require_utf8_scalars(document, file);
  } catch (const YAML::ParserException& e) {
    throw InputError(InputLocation{file, yaml_line(e.mark), std::nullopt, ""},
                     "not valid YAML: " + e.msg);
  } catch (const YAML::Exception& e) {
    throw InputError(InputLocation{file, yaml_line(e.mark), std::nullopt, ""},
                     "cannot read as YAML: " + e.msg);
  }
  if (documents == 0) {
    throw InputError(whole_file, fmt::format("the file is empty; expected {}", empty_hint));
  }
  if (documents > 1) {
    // Only '---' or '...' at the start of a line separate documents; without
    // one, yaml-cpp found "documents" in text it cannot parse.
    const std::string& t = text.str();
    const bool marked = t.starts_with("---") || t.starts_with("...") ||
                        t.find("\n---") != std::string::npos || t.find("\n...") != std::string::npos;
    throw InputError(whole_file,
                     marked ? fmt::format("holds more than one YAML document; a {} holds one", what)
                            : "not valid YAML: it does not parse as one document (a ',' "
                              "outside [ ] or { }?)");
  }
  return document;
}

}  // namespace ssgd::sim
