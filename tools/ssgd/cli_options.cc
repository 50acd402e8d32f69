#include "tools/ssgd/cli_options.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>

#include "common/input_file.h"
#include "common/output_target.h"
#include "simulator/api/request_error.h"
#include "simulator/api/simulation.h"
#include "simulator/input/scenario_inputs.h"

namespace ssgd::tools {

InputError flag_error(std::string_view flag, std::string_view value, std::string_view reason) {
  return sim::request_error(flag, value, reason);
}

InputError flag_path_error(std::string_view flag, std::string_view path, std::string_view reason) {
  return InputError({path.empty() ? std::string("''") : std::string(path), std::nullopt,
                     std::nullopt, std::string(flag)},
                    std::string(reason));
}

InputError flag_error(std::string_view flag, std::string_view reason) {
  return sim::request_error(flag, reason);
}

namespace {

// "--output" of "-o,--output": the long name, as messages show the flag.
std::string long_name(const std::string& names) {
  std::string first;
  std::size_t at = 0;
  while (at <= names.size()) {
    const std::size_t comma = std::min(names.find(',', at), names.size());
    const std::string name = names.substr(at, comma - at);
    if (name.starts_with("--")) return name;
    if (first.empty()) first = name;
    at = comma + 1;
  }
  return first;
}

}  // namespace

CLI::Option* add_output_option(CLI::App& cmd, OutputFile& out, const std::string& names,
                               const std::string& description,
                               const std::vector<std::string>& deprecated) {
  out.flag = long_name(names);
  CLI::Option* option = cmd.add_option(names, out.path, description);
  for (const std::string& old : deprecated) {
    // Run once the whole command line is parsed, so `option`'s count is known.
    cmd.add_option(old, out.path, "deprecated: use " + out.flag)
        ->group("")  // not in --help; README.md lists it
        ->each([&out, option, old, now = out.flag](const std::string&) {
          if (option->count() > 0) {
            throw flag_error(old, fmt::format("is the old spelling of {}: give {} only", now, now));
          }
          out.flag = old;
          std::cerr << fmt::format("ssgd: {} is deprecated, use {}; it will be removed in {}\n",
                                   old, now, kDeprecatedFlagsRemovedIn);
        });
  }
  return option;
}

void check_outputs(std::initializer_list<const OutputFile*> outputs,
                   const std::vector<std::string>& inputs) {
  namespace fs = std::filesystem;
  const auto same_file = [](const std::string& a, const std::string& b) {
    std::error_code ec;
    return fs::weakly_canonical(fs::absolute(a), ec) == fs::weakly_canonical(fs::absolute(b), ec);
  };
  for (const OutputFile* out : outputs) {
    if (!out->given()) continue;
    const fs::path p(out->path);
    const fs::path parent = p.parent_path().empty() ? fs::path(".") : p.parent_path();
    std::error_code ec;
    if (!fs::is_directory(parent, ec)) {
      throw flag_path_error(out->flag, out->path,
                            "cannot write here: folder '" + parent.string() + "' does not exist");
    }
    // A FIFO or a character device is written through, never replaced; a
    // folder, a block device or a socket is refused (common/output_target.h).
    const OutputTarget target = output_target(p);
    if (target.kind == OutputKind::kRefused) {
      throw flag_path_error(out->flag, out->path, "cannot write here: " + target.what);
    }
    // A link: the file it leads to is the one written.
    const fs::path end_folder =
        target.path.parent_path().empty() ? fs::path(".") : target.path.parent_path();
    if (target.kind == OutputKind::kFile && !fs::is_directory(end_folder, ec)) {
      throw flag_path_error(out->flag, out->path,
                            "cannot write here: it is a link to '" + target.path.string() +
                                "', whose folder does not exist");
    }
  }
  // No two outputs may be the same file.
  const std::vector<const OutputFile*> list(outputs);
  for (std::size_t i = 0; i < list.size(); ++i) {
    for (std::size_t j = i + 1; j < list.size(); ++j) {
      if (!list[i]->given() || !list[j]->given()) continue;
      if (same_file(list[i]->path, list[j]->path)) {
        throw flag_path_error(
            list[j]->flag, list[j]->path,
            fmt::format("{} and {} cannot be the same file", list[i]->flag, list[j]->flag));
      }
    }
  }
  // No output may overwrite an input.
  for (const OutputFile* out : outputs) {
    if (!out->given()) continue;
    for (const std::string& in : inputs) {
      if (!in.empty() && same_file(out->path, in)) {
        throw flag_path_error(out->flag, out->path,
                              "is one of the command's inputs: writing it would overwrite it");
      }
    }
  }
}

OutputError output_error(const OutputFile& out, const std::exception& e, std::string_view left) {
  // The stream's own message rarely says why; errno still holds the cause of
  // the failed write when it is one of these.
  const int err = errno;
  const bool known = err == ENOSPC || err == EFBIG || err == EDQUOT || err == EIO || err == EROFS;
  // The writers name the reason themselves too: said once, first.
  std::string what = e.what();
  const std::string reason = std::string(": ") + std::strerror(err);
  if (known && what.size() > reason.size() && what.ends_with(reason)) {
    what.resize(what.size() - reason.size());
  }
  // A FIFO or a device is written through: what came before the failure
  // reached it, and cannot be taken back.
  const OutputTarget target = output_target(out.path);
  const std::string after =
      !left.empty() ? fmt::format("; {}", left)
      : target.kind == OutputKind::kStream
          ? fmt::format("; it is {}, written through: what came before the failure reached it",
                        target.what)
          : std::string("; nothing was written");
  return OutputError(known ? fmt::format("{}: field '{}': cannot write: {} ({}){}", out.path,
                                         out.flag, std::strerror(err), what, after)
                           : fmt::format("{}: field '{}': cannot write: {}{}", out.path, out.flag,
                                         e.what(), after));
}

void require_regular_output(const OutputFile& out, std::string_view why) {
  if (!out.given()) return;
  const OutputTarget target = output_target(out.path);
  if (target.kind == OutputKind::kStream) {
    throw flag_path_error(out.flag, out.path,
                          fmt::format("cannot write here: is {}, and {}: give a regular file",
                                      target.what, why));
  }
}

std::string json_report_text(const nlohmann::json& report) {
  return report.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

void check_input(const std::string& path, std::string_view what) {
  if (!path.empty()) require_regular_file(path, what);
}

void check_inputs(const std::vector<std::string>& paths, std::string_view what) {
  for (const std::string& p : paths) check_input(p, what);
}

void add_scenario_options(CLI::App& cmd, ScenarioOptions& options, ScenarioJobs jobs) {
  options.command = cmd.get_name();
  options.runs_jobs = jobs == ScenarioJobs::kRun;
  cmd.add_option("--scenario", options.file, "scenario YAML file (see scenarios/README.md)");
  cmd.add_option("--set", options.sets, "override a scenario key: key.path=value (repeatable)")
      ->allow_extra_args(false);
}

sim::Scenario load_scenario(const ScenarioOptions& options,
                            const std::vector<std::string>& more_sets) {
  const std::optional<std::filesystem::path> file =
      options.file.empty() ? std::nullopt : std::optional<std::filesystem::path>(options.file);
  std::vector<std::string> sets = options.sets;
  sets.insert(sets.end(), more_sets.begin(), more_sets.end());
  check_input(options.file, "--scenario");
  sim::Scenario scenario = sim::load_scenario(file, sets);
  if (!options.runs_jobs) {
    sim::refuse_scenario_jobs(scenario, options.file, sets, "ssgd " + options.command,
                              "ssgd simulate");
  }
  return scenario;
}

void add_allow_truncated_flag(CLI::App& cmd, bool& allow, const std::string& description) {
  cmd.add_flag("--allow-truncated", allow,
               description.empty() ? "use the readable prefix of a trace that was cut short (with "
                                     "a warning) instead of refusing it"
                                   : description);
}

void add_allow_large_flag(CLI::App& cmd, bool& allow) {
  cmd.add_flag("--allow-large", allow,
               "run even when the estimate of the run's memory exceeds what this machine has "
               "available (default: refuse, naming the estimate and the key that drives it)");
}

std::string comment_safe(const std::string& text) {
  std::string out = text;
  for (char& c : out) {
    if (c < 0x20 || c > 0x7e) c = '?';
  }
  return out;
}

}  // namespace ssgd::tools
