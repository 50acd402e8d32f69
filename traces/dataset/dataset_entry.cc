#include "traces/dataset/dataset_entry.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "common/text_file.h"
#include "traces/dataset/dataset_files.h"

namespace ssgd::trace {
namespace {

using Json = JsonFieldReader::Json;

constexpr const char* kFreeFormHint = "free-form values belong under 'config'";

bool valid_id(const std::string& id) {
  return !id.empty() && std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
  });
}

Duration positive_ns(const JsonFieldReader& r, const Json& v, const std::string& path) {
  return Duration(r.whole(v, path, /*positive=*/true));
}

// A figure as a number, for messages.
std::int64_t count(Duration d) { return d.ns(); }
std::int64_t count(std::int64_t bytes) { return bytes; }

// Fails at `path`.`key` when `value` is below `lower` (`lower_key`'s).
template <typename T>
void require_not_below(const JsonFieldReader& r, const std::string& path, const char* key, T value,
                       const char* lower_key, T lower) {
  if (value < lower) {
    r.fail(JsonFieldReader::child(path, key),
           fmt::format("{} is below {} ({}): expected min <= p10 <= median <= p90", count(value),
                       lower_key, count(lower)));
  }
}

// The order statistics both measured figures hold: median, min, p10, p90
// (each > 0, min <= p10 <= median <= p90) and samples. `value` reads one.
template <typename Stats, typename Read>
void parse_order_stats(const JsonFieldReader& r, const Json& v, const std::string& path, Stats& m,
                       Read value) {
  const auto field = [&](const char* key) {
    return value(r.required(v, path, key), JsonFieldReader::child(path, key));
  };
  m.median = field("median");
  m.min = field("min");
  m.p10 = field("p10");
  m.p90 = field("p90");
  m.samples =
      r.whole(r.required(v, path, "samples"), JsonFieldReader::child(path, "samples"), true);
  require_not_below(r, path, "p10", m.p10, "min", m.min);
  require_not_below(r, path, "median", m.median, "p10", m.p10);
  require_not_below(r, path, "p90", m.p90, "median", m.median);
}

// measured.memory_bytes.
MeasuredBytes parse_measured_bytes(const JsonFieldReader& r, const Json& v,
                                   const std::string& path) {
  r.object(v, path, {"median", "min", "p10", "p90", "samples"}, kFreeFormHint);
  MeasuredBytes m;
  parse_order_stats(r, v, path, m,
                    [&](const Json& x, const std::string& at) { return r.whole(x, at, true); });
  return m;
}

// measured.iteration_ns: the statistics and their order.
MeasuredTime parse_measured_time(const JsonFieldReader& r, const Json& v, const std::string& path) {
  r.object(v, path, {"median", "min", "p10", "p90", "samples", "rounds", "round_medians"},
           kFreeFormHint);
  MeasuredTime m;
  parse_order_stats(r, v, path, m,
                    [&](const Json& x, const std::string& at) { return positive_ns(r, x, at); });
  if (const Json* rounds = JsonFieldReader::optional(v, "rounds")) {
    const std::string at = JsonFieldReader::child(path, "rounds");
    m.rounds = r.whole(*rounds, at, true);
    if (*m.rounds > m.samples) {
      r.fail(at, fmt::format("{} rounds but only {} samples", *m.rounds, m.samples));
    }
  }
  if (const Json* medians = JsonFieldReader::optional(v, "round_medians")) {
    const std::string at = JsonFieldReader::child(path, "round_medians");
    r.array(*medians, at);
    if (m.rounds && static_cast<std::int64_t>(medians->size()) != *m.rounds) {
      r.fail(at, fmt::format("holds {} values, but rounds is {}", medians->size(), *m.rounds));
    }
    if (medians->empty()) r.fail(at, "is empty: leave it out when no round was recorded");
    m.round_medians.emplace();
    for (std::size_t i = 0; i < medians->size(); ++i) {
      const std::string item = JsonFieldReader::element(at, i);
      const Duration d = positive_ns(r, (*medians)[i], item);
      require_not_below(r, path, "round_medians", d, "min", m.min);
      m.round_medians->push_back(d);
    }
  }
  return m;
}

Json measured_bytes_json(const MeasuredBytes& m) {
  return Json{
      {"median", m.median}, {"min", m.min}, {"p10", m.p10}, {"p90", m.p90}, {"samples", m.samples}};
}

Json measured_time_json(const MeasuredTime& m) {
  Json j = Json::object();
  j["median"] = m.median.ns();
  j["min"] = m.min.ns();
  j["p10"] = m.p10.ns();
  j["p90"] = m.p90.ns();
  j["samples"] = m.samples;
  if (m.rounds) j["rounds"] = *m.rounds;
  if (m.round_medians) {
    Json list = Json::array();
    for (const Duration d : *m.round_medians) list.push_back(d.ns());
    j["round_medians"] = std::move(list);
  }
  return j;
}

// The fields both forms share; `base` is the folder that relative paths
// start from (a dataset path, "" at the root), none for the manifest's paths,
// which are dataset paths already.
DatasetEntry parse_entry_fields(const JsonFieldReader& r, const Json& v, const std::string& path,
                                const std::optional<std::string>& base) {
  DatasetEntry e;
  const auto at = [&](const char* key) { return JsonFieldReader::child(path, key); };
  e.id = r.string(r.required(v, path, "id"), at("id"));
  if (!valid_id(e.id)) {
    r.fail(at("id"),
           fmt::format("'{}' is not a valid id: use letters, digits, '.', '_' and '-'", e.id));
  }
  if (const Json* d = JsonFieldReader::optional(v, "description")) {
    e.description = r.string(*d, at("description"));
  }
  const auto file_path = [&](const char* key) {
    std::string given = r.string(r.required(v, path, key), at(key));
    const InputLocation where{r.file(), std::nullopt, std::nullopt, at(key)};
    if (!base) {
      check_dataset_path(given, where);
      return given;
    }
    return resolve_dataset_path(*base, given, where);
  };
  e.trace = file_path("trace");
  e.scenario = file_path("scenario");
  const Json& measured = r.required(v, path, "measured");
  r.object(measured, at("measured"), {"iteration_ns", "memory_bytes"}, kFreeFormHint);
  e.iteration = parse_measured_time(r, r.required(measured, at("measured"), "iteration_ns"),
                                    JsonFieldReader::child(at("measured"), "iteration_ns"));
  if (const Json* memory = JsonFieldReader::optional(measured, "memory_bytes")) {
    e.memory =
        parse_measured_bytes(r, *memory, JsonFieldReader::child(at("measured"), "memory_bytes"));
  }
  if (const Json* from = JsonFieldReader::optional(v, "predict_from")) {
    r.array(*from, at("predict_from"));
    for (std::size_t i = 0; i < from->size(); ++i) {
      const std::string item = JsonFieldReader::element(at("predict_from"), i);
      std::string id = r.string((*from)[i], item);
      if (id == e.id) {
        r.fail(item, fmt::format("'{}' is this entry: its replay is always checked; list other "
                                 "entries here",
                                 id));
      }
      if (std::find(e.predict_from.begin(), e.predict_from.end(), id) != e.predict_from.end()) {
        r.fail(item, fmt::format("'{}' is listed twice", id));
      }
      e.predict_from.push_back(std::move(id));
    }
  }
  if (const Json* config = JsonFieldReader::optional(v, "config")) {
    if (!config->is_object()) {
      r.fail(at("config"), "expected an object, got " + JsonFieldReader::describe(*config));
    }
    e.config = *config;
  }
  return e;
}

}  // namespace

DatasetEntry read_dataset_entry(const std::filesystem::path& dir, const std::string& entry_file) {
  const std::filesystem::path file = dir / entry_file;
  const JsonFieldReader r(file.string());
  const Json doc = r.parse(read_text_file(file, "dataset entry"));
  r.object(doc, "",
           {"id", "description", "trace", "scenario", "measured", "predict_from", "config"},
           kFreeFormHint);
  const std::string base = std::filesystem::path(entry_file).parent_path().generic_string();
  DatasetEntry e = parse_entry_fields(r, doc, "", base);
  e.entry_file = entry_file;
  return e;
}

Json entry_manifest_json(const DatasetEntry& e) {
  Json j = Json::object();
  j["id"] = e.id;
  j["description"] = e.description;
  j["entry_file"] = e.entry_file;
  j["trace"] = e.trace;
  j["scenario"] = e.scenario;
  j["measured"] = Json{{"iteration_ns", measured_time_json(e.iteration)}};
  if (e.memory) j["measured"]["memory_bytes"] = measured_bytes_json(*e.memory);
  j["predict_from"] = e.predict_from;
  j["config"] = e.config;
  return j;
}

DatasetEntry parse_manifest_entry(const Json& v, const JsonFieldReader& r,
                                  const std::string& path) {
  r.object(v, path,
           {"id", "description", "entry_file", "trace", "scenario", "measured", "predict_from",
            "config"});
  DatasetEntry e = parse_entry_fields(r, v, path, std::nullopt);
  const std::string at = JsonFieldReader::child(path, "entry_file");
  e.entry_file = r.string(r.required(v, path, "entry_file"), at);
  const InputLocation where{r.file(), std::nullopt, std::nullopt, at};
  check_dataset_path(e.entry_file, where);
  if (std::filesystem::path(e.entry_file).filename() != kDatasetEntryName) {
    throw InputError(where, fmt::format("'{}' is not an {} file", e.entry_file, kDatasetEntryName));
  }
  return e;
}

void check_dataset_entries(
    const std::vector<DatasetEntry>& entries,
    const std::function<InputLocation(std::size_t, const std::string&)>& where) {
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const auto [it, added] = index.emplace(entries[i].id, i);
    if (!added) {
      throw InputError(where(i, "id"), fmt::format("duplicate id '{}': {} has it too",
                                                   entries[i].id, entries[it->second].entry_file));
    }
  }
  for (std::size_t i = 0; i < entries.size(); ++i) {
    for (std::size_t k = 0; k < entries[i].predict_from.size(); ++k) {
      const std::string& id = entries[i].predict_from[k];
      if (!index.contains(id)) {
        throw InputError(where(i, fmt::format("predict_from[{}]", k)),
                         fmt::format("no entry has the id '{}'", id));
      }
    }
  }
}

}  // namespace ssgd::trace
