#include "traces/dataset/dataset_manifest.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "common/text_file.h"
#include "traces/dataset/json_field_reader.h"

namespace ssgd::trace {
namespace {

using Json = JsonFieldReader::Json;

bool is_sha256_hex(const std::string& s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

DatasetFile parse_file(const JsonFieldReader& r, const Json& v, const std::string& path) {
  r.object(v, path, {"path", "size_bytes", "sha256"});
  DatasetFile f;
  const std::string at_path = JsonFieldReader::child(path, "path");
  f.path = r.string(r.required(v, path, "path"), at_path);
  check_dataset_path(f.path, {r.file(), std::nullopt, std::nullopt, at_path});
  f.size_bytes =
      r.whole(r.required(v, path, "size_bytes"), JsonFieldReader::child(path, "size_bytes"));
  const std::string at_sha = JsonFieldReader::child(path, "sha256");
  f.sha256 = r.string(r.required(v, path, "sha256"), at_sha);
  if (!is_sha256_hex(f.sha256)) r.fail(at_sha, "expected 64 lower-case hexadecimal digits");
  return f;
}

}  // namespace

std::string manifest_text(const DatasetManifest& m) {
  Json j = Json::object();
  j["format"] = kDatasetManifestFormat;
  j["format_version"] = kDatasetManifestVersion;
  j["name"] = m.name;
  j["description"] = m.description;
  if (!m.tolerance.empty()) {
    Json t = Json::object();
    if (m.tolerance.max_error_percent) t["max_error_percent"] = *m.tolerance.max_error_percent;
    if (m.tolerance.max_whatif_error_percent) {
      t["max_whatif_error_percent"] = *m.tolerance.max_whatif_error_percent;
    }
    j["tolerance"] = std::move(t);
  }
  j["ssgd_version"] = m.ssgd_version;
  Json entries = Json::array();
  for (const DatasetEntry& e : m.entries) entries.push_back(entry_manifest_json(e));
  j["entries"] = std::move(entries);
  Json files = Json::array();
  for (const DatasetFile& f : m.files) {
    files.push_back(Json{{"path", f.path}, {"size_bytes", f.size_bytes}, {"sha256", f.sha256}});
  }
  j["files"] = std::move(files);
  return j.dump(2) + "\n";
}

DatasetManifest parse_manifest(std::string_view text, const std::string& file) {
  const JsonFieldReader r(file);
  const Json doc = r.parse(text);
  r.object(doc, "",
           {"format", "format_version", "name", "description", "tolerance", "ssgd_version", "entries",
            "files"});
  const std::string format = r.string(r.required(doc, "", "format"), "format");
  if (format != kDatasetManifestFormat) {
    r.fail("format", fmt::format("'{}' is not a dataset manifest (expected '{}')", format,
                                 kDatasetManifestFormat));
  }
  const std::int64_t version = r.whole(r.required(doc, "", "format_version"), "format_version");
  if (version != kDatasetManifestVersion) {
    r.fail("format_version", fmt::format("version {} is not one this ssgd reads (it reads {})",
                                         version, kDatasetManifestVersion));
  }
  DatasetManifest m;
  m.name = r.string(r.required(doc, "", "name"), "name");
  m.description = r.string(r.required(doc, "", "description"), "description");
  if (const Json* t = JsonFieldReader::optional(doc, "tolerance")) {
    r.object(*t, "tolerance", {"max_error_percent", "max_whatif_error_percent"});
    const auto percent = [&](const char* key) -> std::optional<double> {
      const Json* v = JsonFieldReader::optional(*t, key);
      if (v == nullptr) return std::nullopt;
      const std::string at = JsonFieldReader::child("tolerance", key);
      if (!v->is_number() || !std::isfinite(v->get<double>()) || v->get<double>() < 0) {
        r.fail(at, fmt::format("expected a percentage of at least 0, got {}", JsonFieldReader::describe(*v)));
      }
      return v->get<double>();
    };
    m.tolerance = {percent("max_error_percent"), percent("max_whatif_error_percent")};
    if (m.tolerance.empty()) r.fail("tolerance", "is empty: give max_error_percent or max_whatif_error_percent, or leave it out");
  }
  m.ssgd_version = r.string(r.required(doc, "", "ssgd_version"), "ssgd_version");

  const Json& files = r.array(r.required(doc, "", "files"), "files");
  std::map<std::string, std::size_t> file_index;
  for (std::size_t i = 0; i < files.size(); ++i) {
    const std::string at = JsonFieldReader::element("files", i);
    DatasetFile f = parse_file(r, files[i], at);
    if (const auto [it, added] = file_index.emplace(f.path, i); !added) {
      r.fail(JsonFieldReader::child(at, "path"),
             fmt::format("'{}' is listed twice (also files[{}])", f.path, it->second));
    }
    m.files.push_back(std::move(f));
  }

  const Json& entries = r.array(r.required(doc, "", "entries"), "entries");
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const std::string at = JsonFieldReader::element("entries", i);
    DatasetEntry e = parse_manifest_entry(entries[i], r, at);
    for (const auto& [key, path] :
         {std::pair<const char*, const std::string&>{"entry_file", e.entry_file},
          {"trace", e.trace},
          {"scenario", e.scenario}}) {
      if (!file_index.contains(path)) {
        r.fail(JsonFieldReader::child(at, key),
               fmt::format("'{}' is not among the listed files", path));
      }
    }
    m.entries.push_back(std::move(e));
  }
  check_dataset_entries(m.entries, [&](std::size_t i, const std::string& field) {
    return InputLocation{file, std::nullopt, std::nullopt,
                         JsonFieldReader::child(JsonFieldReader::element("entries", i), field)};
  });
  return m;
}

DatasetManifest read_manifest(const std::filesystem::path& dir) {
  const std::filesystem::path file = dir / kDatasetManifestName;
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::symlink_status(file, ec))) {
    throw InputError({file.string(), std::nullopt, std::nullopt, ""},
                     "no manifest: run `ssgd dataset pack` on the folder first");
  }
  return parse_manifest(read_text_file(file, "dataset manifest"), file.string());
}

}  // namespace ssgd::trace
