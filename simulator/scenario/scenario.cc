#include "simulator/scenario/scenario.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "common/error.h"
#include "common/suggest.h"
#include "common/input_file.h"
#include "common/utf8.h"
#include "simulator/scenario/scenario_jobs.h"
#include "simulator/scenario/scenario_platform.h"
#include "simulator/scenario/scenario_scaling.h"
#include "simulator/scenario/scenario_schema.h"
#include "simulator/scenario/yaml_file.h"

namespace ssgd::sim {
namespace {

constexpr std::string_view kSetFile = "--set";

std::string_view leaf_of(std::string_view path) {
  const auto dot = path.rfind('.');
  return dot == std::string_view::npos ? path : path.substr(dot + 1);
}

std::string_view section_of(std::string_view path) {
  const auto dot = path.rfind('.');
  return dot == std::string_view::npos ? std::string_view() : path.substr(0, dot);
}

// The keys directly under `section` ("" for the top level), sections included.
std::string keys_under(std::string_view section) {
  std::string names;
  const auto add = [&names](std::string_view name) {
    if (!names.empty()) names += ", ";
    names += name;
  };
  for (const auto& k : scenario_keys()) {
    if (section_of(k.path) == section) add(leaf_of(k.path));
  }
  for (std::string_view s : scenario_sections()) {
    if (section_of(s) == section) add(leaf_of(s));
  }
  return names;
}

// The candidate nearest `wanted`, if near enough to suggest. The right name
// in the wrong section is the nearest miss there is; a name cut short
// ("gpus" for "gpus_per_node") is the next nearest; then edit distance.
std::optional<std::string_view> nearest(std::string_view wanted,
                                        const std::vector<std::string_view>& candidates) {
  // No key is anywhere near this long: nothing to suggest, and no edit
  // distance over a megabyte of key.
  if (wanted.size() > kMaxEchoBytes) return std::nullopt;
  std::string_view best;
  std::size_t best_distance = std::string_view::npos;
  const std::string_view leaf = leaf_of(wanted);
  for (const std::string_view candidate : candidates) {
    const std::string_view candidate_leaf = leaf_of(candidate);
    std::size_t d = 0;
    if (candidate_leaf == leaf) d = 0;
    else if (leaf.size() >= 3 && candidate_leaf.starts_with(leaf)) d = 1;
    else d = edit_distance(wanted, candidate);
    if (d < best_distance) {
      best_distance = d;
      best = candidate;
    }
  }
  const std::size_t threshold = std::max<std::size_t>(2, wanted.size() / 4);
  if (best_distance <= threshold) return best;
  return std::nullopt;
}

// " (did you mean 'cluster.nodes'?)" for a near miss or a key put in the
// wrong section; otherwise the keys valid where the unknown one was written.
std::string suggest(std::string_view path) {
  std::vector<std::string_view> candidates;
  for (const auto& k : scenario_keys()) candidates.push_back(k.path);
  for (std::string_view s : scenario_sections()) candidates.push_back(s);
  if (const auto best = nearest(path, candidates)) return fmt::format(" (did you mean '{}'?)", *best);
  const std::string_view section = section_of(path);
  if (section.empty()) return fmt::format(" (top-level keys: {})", keys_under(section));
  return fmt::format(" (keys under '{}': {})", section, keys_under(section));
}

std::string describe_kind(const YAML::Node& node) { return describe_yaml_node(node); }

std::optional<std::int64_t> line_of(const YAML::Mark& mark) { return yaml_line(mark); }

[[noreturn]] void throw_unknown_key(InputLocation where, std::string_view path) {
  throw InputError(std::move(where),
                   fmt::format("unknown key '{}'{}", bounded(path), suggest(path)));
}

// Runs a key's setter, turning its reason into an InputError at `where`.
template <typename Key, typename Target>
void apply(Target& target, const Key& key, std::string_view value, const InputLocation& where) {
  try {
    key.set(target, value);
  } catch (const std::invalid_argument& e) {
    // The reason may quote the value whole: shown bounded.
    throw InputError(where, with_bounded_echo(e.what(), value));
  }
}

// Sets `name` of one entry of `jobs:` (scenario_schema.h, job_keys()).
void set_job_key(JobSpec& job, std::string_view name, std::string_view value,
                 const InputLocation& where) {
  const JobKey* key = find_job_key(name);
  if (key == nullptr) {
    std::vector<std::string_view> names;
    std::string listed;
    for (const auto& k : job_keys()) {
      names.push_back(k.name);
      if (!listed.empty()) listed += ", ";
      listed += k.name;
    }
    const auto best = nearest(name, names);
    throw InputError(where, best ? fmt::format("unknown job key '{}' (did you mean '{}'?)",
                                               bounded(name), *best)
                                 : fmt::format("unknown job key '{}' (job keys: {})",
                                               bounded(name), listed));
  }
  if (value.empty()) {
    throw InputError(where, fmt::format("has no value; expected a value of type {}", key->type));
  }
  apply(job, *key, value, where);
}

std::string section_needs_mapping(std::string_view section) {
  return fmt::format("'{}' is a section: expected a mapping of its keys ({})", section,
                     keys_under(section));
}

class YamlLoader {
 public:
  YamlLoader(Scenario& scenario, std::string file) : scenario_(scenario), file_(std::move(file)) {}

  void load_document(const YAML::Node& root) {
    if (root.IsNull()) {
      throw InputError(at(root.Mark(), ""),
                       "the document is empty; expected a mapping of scenario keys such as "
                       "'cluster:'");
    }
    if (!root.IsMap()) {
      throw InputError(at(root.Mark(), ""),
                       fmt::format("expected a mapping of scenario keys at the top level, got {}{}",
                                   describe_kind(root),
                                   root.IsScalar() ? " (a scenario is YAML such as 'cluster: {nodes: 4}'; "
                                                     "a profile or trace is the command's input, not "
                                                     "its --scenario)"
                                                   : ""));
    }
    load_mapping(root, "");
  }

 private:
  InputLocation at(const YAML::Mark& mark, std::string field) const {
    return InputLocation{file_, line_of(mark), std::nullopt, std::move(field)};
  }

  // `prefix` is "" at the top level, else a section's name.
  void load_mapping(const YAML::Node& mapping, const std::string& prefix) {
    // yaml-cpp keeps both pairs of a repeated key, so repeats are caught here.
    std::map<std::string, std::optional<std::int64_t>, std::less<>> seen;
    for (const auto& pair : mapping) {
      const YAML::Node& key_node = pair.first;
      const YAML::Node& value = pair.second;
      if (!key_node.IsScalar()) {
        throw InputError(at(key_node.Mark(), prefix),
                         fmt::format("keys must be plain names, got {}", describe_kind(key_node)));
      }
      const std::string& name = key_node.Scalar();
      const std::string path = prefix.empty() ? name : prefix + "." + name;
      InputLocation where = at(key_node.Mark(), path);
      if (name.empty()) throw InputError(std::move(where), "empty key");
      if (name.find('.') != std::string::npos) {
        throw InputError(std::move(where),
                         fmt::format("key '{}' contains '.': write nested mappings in files; "
                                     "dotted paths are for --set",
                                     bounded(name)));
      }
      const auto [previous, inserted] = seen.emplace(name, where.line);
      if (!inserted) {
        const auto& first_line = previous->second;
        throw InputError(std::move(where),
                         first_line ? fmt::format("duplicate key '{}' (first given at line {})",
                                                  bounded(path), *first_line)
                                    : fmt::format("duplicate key '{}'", bounded(path)));
      }
      if (path == "jobs") {
        load_jobs(value, std::move(where));
        continue;
      }
      if (is_scenario_section(path)) {
        if (!value.IsMap()) {
          throw InputError(std::move(where), fmt::format("{}, got {}",
                                                         section_needs_mapping(path),
                                                         describe_kind(value)));
        }
        load_mapping(value, path);
        continue;
      }
      const ScenarioKey* key = find_scenario_key(path);
      if (key == nullptr) throw_unknown_key(std::move(where), path);
      if (!value.IsScalar()) {
        throw InputError(std::move(where),
                         fmt::format("expected a value of type {}, got {}", key->type,
                                     describe_kind(value)));
      }
      apply(scenario_, *key, value.Scalar(), where);
      scenario_.origins[path] = KeyOrigin{where, value.Scalar()};
    }
  }

  // `jobs:` is a sequence of mappings, one per job.
  void load_jobs(const YAML::Node& value, InputLocation where) {
    if (!value.IsSequence()) {
      throw InputError(std::move(where),
                       fmt::format("expected a sequence of jobs ('- kind: ...' entries), got {}",
                                   describe_kind(value)));
    }
    for (const auto& entry : value) {
      const std::size_t index = scenario_.jobs.size();
      const std::string prefix = fmt::format("jobs[{}]", index);
      if (!entry.IsMap()) {
        throw InputError(at(entry.Mark(), prefix),
                         fmt::format("expected a mapping of job keys, got {}", describe_kind(entry)));
      }
      JobSpec job;
      job.file = file_;
      job.line = line_of(entry.Mark());
      std::map<std::string, bool, std::less<>> seen;
      for (const auto& pair : entry) {
        const std::string name = pair.first.IsScalar() ? pair.first.Scalar() : std::string();
        InputLocation key_at = at(pair.first.Mark(), prefix + "." + name);
        if (!pair.first.IsScalar()) {
          throw InputError(std::move(key_at),
                           fmt::format("keys must be plain names, got {}", describe_kind(pair.first)));
        }
        if (!seen.emplace(name, true).second) {
          throw InputError(std::move(key_at), fmt::format("duplicate key '{}'", bounded(name)));
        }
        if (!pair.second.IsScalar()) {
          throw InputError(std::move(key_at),
                           fmt::format("expected a value, got {}", describe_kind(pair.second)));
        }
        set_job_key(job, name, pair.second.Scalar(), key_at);
        scenario_.origins[fmt::format("jobs.{}.{}", index, name)] =
            KeyOrigin{std::move(key_at), pair.second.Scalar()};
      }
      scenario_.jobs.push_back(std::move(job));
    }
  }

  Scenario& scenario_;
  std::string file_;
};

void load_file(Scenario& scenario, const std::filesystem::path& path) {
  const std::string file = path.string();
  const YAML::Node document =
      read_yaml_file(path, "scenario file", "a mapping of scenario keys such as 'cluster:'");
  const auto calibration_before = scenario.calibration;
  const auto second_profile_before = scenario.scaling.second_profile;
  YamlLoader(scenario, file).load_document(document);
  // A relative calibration path in a file is relative to the file.
  if (scenario.calibration && scenario.calibration != calibration_before &&
      scenario.calibration->is_relative()) {
    scenario.calibration = path.parent_path() / *scenario.calibration;
  }
  // So is the second profile of the batch compute model.
  if (scenario.scaling.second_profile && scenario.scaling.second_profile != second_profile_before &&
      scenario.scaling.second_profile->is_relative()) {
    scenario.scaling.second_profile = path.parent_path() / *scenario.scaling.second_profile;
  }
  // So is a job's profile.
  for (JobSpec& job : scenario.jobs) {
    if (job.file == file && job.profile && job.profile->is_relative()) {
      job.profile = path.parent_path() / *job.profile;
    }
  }
}

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t");
  return s.substr(first, last - first + 1);
}

// --set jobs.<index>.<key>=value: a key of an existing job, or of a new
// one when <index> is the number of jobs so far.
void set_job(Scenario& scenario, std::string_view path, std::string_view value,
             const InputLocation& where) {
  const auto dot = path.find('.', 5);
  const std::string_view index_text = path.size() > 5 ? path.substr(5, dot == std::string_view::npos ? std::string_view::npos : dot - 5) : std::string_view();
  std::size_t index = 0;
  const auto [ptr, ec] =
      std::from_chars(index_text.data(), index_text.data() + index_text.size(), index);
  if (dot == std::string_view::npos || index_text.empty() || ec != std::errc() ||
      ptr != index_text.data() + index_text.size()) {
    throw InputError(where, "set a job's key as jobs.<index>.<key>=value, e.g. jobs.0.nodes=4");
  }
  if (index > scenario.jobs.size()) {
    throw InputError(where, fmt::format("there are {} jobs so far: the next one is jobs.{}",
                                        scenario.jobs.size(), scenario.jobs.size()));
  }
  if (index == scenario.jobs.size()) {
    JobSpec job;
    job.file = std::string(kSetFile);
    scenario.jobs.push_back(std::move(job));
  }
  set_job_key(scenario.jobs[index], path.substr(dot + 1), value, where);
  scenario.origins[fmt::format("jobs.{}.{}", index, path.substr(dot + 1))] =
      KeyOrigin{where, std::string(value)};
}

void apply_set(Scenario& scenario, std::string_view flag) {
  const auto eq = flag.find('=');
  if (eq == std::string_view::npos) {
    throw InputError(InputLocation{std::string(kSetFile), std::nullopt, std::nullopt,
                                   std::string(trim(flag))},
                     fmt::format("expected key.path=value, got '{}'", bounded(flag)));
  }
  const std::string_view path = trim(flag.substr(0, eq));
  const std::string_view value = trim(flag.substr(eq + 1));
  const InputLocation where{std::string(kSetFile), std::nullopt, std::nullopt, std::string(path)};
  if (std::string why = utf8_problem(flag); !why.empty()) throw InputError(where, "the value " + why);
  if (path.empty()) {
    throw InputError(where, fmt::format("expected key.path=value, got '{}'", bounded(flag)));
  }
  if (path.starts_with("jobs.") || path == "jobs") {
    set_job(scenario, path, value, where);
    return;
  }
  if (is_scenario_section(path)) {
    throw InputError(where,
                     fmt::format("'{}' is a section; set one of its keys as {}.<key>=value ({})",
                                 path, path, keys_under(path)));
  }
  const ScenarioKey* key = find_scenario_key(path);
  if (key == nullptr) throw_unknown_key(where, path);
  if (value.empty()) {
    throw InputError(where, fmt::format("has no value; expected a value of type {}", key->type));
  }
  apply(scenario, *key, value, where);
  scenario.origins[std::string(path)] = KeyOrigin{where, std::string(value)};
}

}  // namespace

Scenario parse_scenario(const std::optional<std::filesystem::path>& file,
                        const std::vector<std::string>& sets) {
  Scenario scenario;
  scenario.file = file;
  if (file) load_file(scenario, *file);
  for (const auto& flag : sets) apply_set(scenario, flag);
  scenario.gpus_per_node = scenario_gpus_per_node(scenario);
  finish_jobs(scenario);
  check_scaling_keys(scenario, file ? file->string() : std::string(kSetFile));
  // Straggler ranks can be checked only now that the worker count is known
  // (the replay checks them again, for scenarios built in code).
  for (const Straggler& st : scenario.perturb.stragglers) {
    if (st.rank >= scenario.workers()) {
      throw InputError(
          InputLocation{file ? file->string() : std::string(kSetFile), std::nullopt, std::nullopt,
                        "perturb.stragglers"},
          fmt::format("rank {} is out of range: the scenario has {} worker{} (ranks 0..{})", st.rank,
                      scenario.workers(), scenario.workers() == 1 ? "" : "s", scenario.workers() - 1));
    }
  }
  return scenario;
}

namespace {

// What was read for the file `key` names now; null when it names none.
template <typename T>
std::shared_ptr<const T> read_for(const std::string& key,
                                  const std::optional<std::filesystem::path>& named,
                                  const std::shared_ptr<const T>& data,
                                  const std::filesystem::path& read_from) {
  if (!named) return nullptr;
  if (needs_reading(named, data, read_from)) {
    throw std::logic_error(fmt::format(
        "the scenario's {} names {}, which was never read: call read_scenario_files", key,
        named->string()));
  }
  return data;
}

}  // namespace

InputLocation key_location(const Scenario& scenario, std::string_view key) {
  if (const auto it = scenario.origins.find(key); it != scenario.origins.end()) {
    return it->second.where;
  }
  return {scenario.file ? scenario.file->string() : std::string("the scenario"), std::nullopt,
          std::nullopt, std::string(key)};
}

void check_named_file(const Scenario& scenario, const ScenarioFile& file) {
  struct stat st {};
  // stat, not lstat: a symbolic link to a regular file is read through.
  if (::stat(file.path.c_str(), &st) != 0) {
    const int err = errno;
    throw InputError(key_location(scenario, file.key),
                     fmt::format("cannot read '{}': {}", bounded(file.path.string()),
                                 std::strerror(err)));
  }
  try {
    require_regular_file(file.path, file.key);
  } catch (const InputError& e) {
    throw named_file_error(scenario, file, e);
  }
}

InputError named_file_error(const Scenario& scenario, const ScenarioFile& file,
                            const InputError& error) {
  const InputLocation at = key_location(scenario, file.key);
  const std::string given =
      at.file == kSetFile ? std::string("given with --set")
                          : "at " + InputLocation{at.file, at.line, std::nullopt, ""}.to_string();
  return InputError(error.where(),
                    fmt::format("{} (the file {} names, {})", error.reason(), at.field, given));
}

std::shared_ptr<const NetworkCalibration> scenario_calibration(const Scenario& scenario) {
  return read_for("network.calibration", scenario.calibration, scenario.files.calibration,
                  scenario.files.calibration_path);
}

std::shared_ptr<const trace::LayerProfile> scenario_second_profile(const Scenario& scenario) {
  return read_for("scaling.second_profile", scenario.scaling.second_profile,
                  scenario.files.second_profile, scenario.files.second_profile_path);
}

InputError located_error(const Scenario& scenario, const ParameterError& error) {
  const auto it = scenario.origins.find(error.key());
  if (it == scenario.origins.end()) {
    const std::string file = scenario.file ? scenario.file->string() : std::string("the scenario");
    return InputError({file, std::nullopt, std::nullopt, error.key()},
                      fmt::format("{} (the key was not set: the value is the platform preset's "
                                  "or the default)",
                                  error.what()));
  }
  return InputError(it->second.where,
                    fmt::format("{} (value given: '{}')", error.what(), bounded(it->second.value)));
}

Scenario scenario_for_profile(const Scenario& scenario, const trace::LayerProfile& profile) {
  Scenario out = scenario;
  if (!scenario.update_time_given && profile.update) out.update_time = *profile.update;
  // The strategy and shard group a sharded capture was taken under, unless
  // the scenario chooses its own (the units follow the profile's column
  // under sharding.units auto).
  if (!scenario.origins.contains("sharding.strategy") && !profile.sharding.empty()) {
    out.sharding.strategy = parse_shard_strategy(profile.sharding).value_or(ShardStrategy::kNone);
  }
  if (!scenario.origins.contains("sharding.group") && profile.shard_group &&
      out.sharding.strategy == ShardStrategy::kHsdp) {
    out.sharding.group = *profile.shard_group;
  }
  // The micro-batches a step of the capture ran (its rows are one's).
  if (!scenario.origins.contains("workload.accumulation") && profile.micro_batches) {
    out.sharding.accumulation = *profile.micro_batches;
  }
  // How it reduced its gradients, when the step the scenario replays is
  // sharded too (a replicated what-if all-reduces).
  if (!scenario.origins.contains("sharding.gradient_reduction") &&
      !profile.gradient_reduction.empty() && out.sharding.strategy != ShardStrategy::kNone) {
    out.sharding.gradient_reduction = parse_gradient_reduction(profile.gradient_reduction)
                                          .value_or(GradientReduction::kReduceScatter);
  }
  return out;
}

TracedJob scenario_for_traced_job(Scenario& scenario, const trace::LayerProfile& profile) {
  const std::int64_t world = profile.traced.world;
  if (world <= 1 || scenario.origins.contains("cluster.nodes") ||
      scenario.origins.contains("cluster.gpus_per_node") || scenario.gpus_per_node_given) {
    return {};
  }
  const bool generic = scenario.platform.preset == "generic";
  std::int64_t node = scenario.gpus_per_node;  // the preset's node (load_scenario)
  std::string of;
  if (!generic) {
    of = fmt::format("a {} node's {} GPUs", scenario.platform.preset, node);
  } else if (profile.traced.gpus_per_host > 0) {
    node = profile.traced.gpus_per_host;
    of = fmt::format("the {} GPUs its host shows the traced process", node);
  } else if (profile.traced.hosts > 1 && world % profile.traced.hosts == 0) {
    node = world / profile.traced.hosts;
    of = fmt::format("its {} ranks over the {} hosts it records", world, profile.traced.hosts);
  } else {
    node = world;
    of = "no GPUs or hosts recorded: one node";
  }
  TracedJob out;
  if (node > kMaxClusterGpusPerNode || world / node > kMaxClusterNodes) {
    out.said = fmt::format(
        "the trace is of a job of {} ranks, beyond what cluster.nodes ({} at most) and "
        "cluster.gpus_per_node ({} at most) take on nodes of {} GPUs ({}): replayed on {} x {}",
        world, kMaxClusterNodes, kMaxClusterGpusPerNode, node, of, scenario.nodes,
        scenario.gpus_per_node);
    return out;
  }
  if (world % node == 0) {
    scenario.nodes = world / node;
    scenario.gpus_per_node = node;
  } else if (world < node) {
    scenario.nodes = 1;
    scenario.gpus_per_node = world;
  } else {
    out.said = fmt::format(
        "the trace is of a job of {} ranks, which does not fill nodes of {} GPUs ({}): replayed "
        "on {} x {}; set cluster.nodes and cluster.gpus_per_node to replay that job",
        world, node, of, scenario.nodes, scenario.gpus_per_node);
    return out;
  }
  // A node cut to fewer GPUs than the preset's, or the generic platform's
  // nodes as the trace had them: as cluster.gpus_per_node would give them.
  scenario.gpus_per_node_given = generic || scenario.gpus_per_node != node;
  out.applied = true;
  out.said = fmt::format(
      "cluster: the trace's job, {} ranks, on {} node(s) x {} GPU(s) (nodes of {}; "
      "cluster.nodes and cluster.gpus_per_node not set)",
      world, scenario.nodes, scenario.gpus_per_node, of);
  return out;
}

std::vector<ScenarioFile> scenario_files(const Scenario& scenario) {
  std::vector<ScenarioFile> files;
  if (scenario.calibration) files.push_back({"network.calibration", *scenario.calibration});
  if (scenario.scaling.second_profile) {
    files.push_back({"scaling.second_profile", *scenario.scaling.second_profile});
  }
  for (std::size_t i = 0; i < scenario.jobs.size(); ++i) {
    if (scenario.jobs[i].profile) {
      files.push_back({fmt::format("jobs.{}.profile", i), *scenario.jobs[i].profile});
    }
  }
  return files;
}

std::string describe_scenario_keys() {
  std::size_t path_width = std::string_view("key").size();
  std::size_t type_width = std::string_view("type").size();
  std::size_t default_width = std::string_view("default").size();
  for (const auto& k : scenario_keys()) {
    path_width = std::max(path_width, k.path.size());
    type_width = std::max(type_width, k.type.size());
    default_width = std::max(default_width, k.default_text.size());
  }
  for (const auto& k : job_keys()) {
    path_width = std::max(path_width, k.name.size() + 7);  // "jobs[]."
    type_width = std::max(type_width, k.type.size());
    default_width = std::max(default_width, k.default_text.size());
  }
  std::string out;
  const auto row = [&](std::string_view path, std::string_view type, std::string_view def,
                       std::string_view description) {
    out += fmt::format("{:<{}}  {:<{}}  {:<{}}  {}\n", path, path_width, type, type_width, def,
                       default_width, description);
  };
  row("key", "type", "default", "description");
  for (const auto& k : scenario_keys()) row(k.path, k.type, k.default_text, k.description);
  for (const auto& k : job_keys()) {
    row(fmt::format("jobs[].{}", k.name), k.type, k.default_text, k.description);
  }
  return out;
}

}  // namespace ssgd::sim
