// The dataset model of traces/: dataset paths, entry.json, the manifest's
// text and schema, and the integrity check of a folder against it. Every
// error is checked by its whole message: file, field and reason.
#include "traces/dataset/dataset_manifest.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <string>

#include "common/sha256.h"
#include "tests/support/test_files.h"
#include "traces/dataset/dataset_check.h"
#include "traces/dataset/dataset_entry.h"
#include "traces/dataset/dataset_files.h"

namespace ssgd::trace {
namespace {

namespace fs = std::filesystem;
using ssgd::testing::write_file_bytes;
using ::testing::HasSubstr;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

const InputLocation kWhere{"e.json", std::nullopt, std::nullopt, "trace"};

TEST(DatasetPath, ResolvesRelativeToTheEntrysFolder) {
  EXPECT_EQ(resolve_dataset_path("a/b", "t.ssgdt", kWhere), "a/b/t.ssgdt");
  EXPECT_EQ(resolve_dataset_path("a/b", "./x/../t.ssgdt", kWhere), "a/b/t.ssgdt");
  EXPECT_EQ(resolve_dataset_path("a/b", "../../shared/n.yaml", kWhere), "shared/n.yaml");
  EXPECT_EQ(resolve_dataset_path("", "t.ssgdt", kWhere), "t.ssgdt");
}

TEST(DatasetPath, RefusesPathsOutsideHiddenOrNotFiles) {
  const auto resolve = [](const std::string& base, const std::string& given) {
    return error_of([&] { resolve_dataset_path(base, given, kWhere); });
  };
  EXPECT_EQ(resolve("a/b", "../../../t.ssgdt"),
            "e.json: field 'trace': '../../../t.ssgdt' leaves the dataset folder");
  EXPECT_EQ(resolve("", ".."), "e.json: field 'trace': '..' leaves the dataset folder");
  EXPECT_EQ(resolve("a", "/etc/passwd"),
            "e.json: field 'trace': '/etc/passwd' is absolute; paths in a dataset are relative "
            "to the entry's folder");
  EXPECT_EQ(resolve("a", ""), "e.json: field 'trace': is empty: expected a path to a file");
  EXPECT_EQ(resolve("a", ".."), "e.json: field 'trace': '..' names a folder, not a file");
  EXPECT_EQ(resolve("a", ".git/config"),
            "e.json: field 'trace': '.git/config' is hidden (a name starting with '.'); hidden "
            "files are not part of a dataset");
  EXPECT_EQ(resolve("a", "../manifest.json"),
            "e.json: field 'trace': '../manifest.json' is the dataset's manifest");
  EXPECT_EQ(error_of([] { check_dataset_path("a/./b", kWhere); }),
            "e.json: field 'trace': 'a/./b' is not a dataset path in normal form (expected 'a/b')");
}

class DatasetFolder : public testing::TempDirTest {
 protected:
  // A minimal entry in `folder`, with the trace and scenario files present.
  void entry(const std::string& folder, const std::string& json) {
    fs::create_directories(dir_ / folder);
    write_file_bytes(dir_ / folder / "entry.json", json);
    write_file_bytes(dir_ / folder / "t.csv", "trace");
    write_file_bytes(dir_ / folder / "s.yaml", "scenario");
  }
  std::string read_error(const std::string& json) {
    entry("e", json);
    return error_of([&] { read_dataset_entry(dir_, "e/entry.json"); });
  }
  std::string file(const std::string& rel) const { return (dir_ / rel).string(); }
};

constexpr const char* kEntry =
    R"({"id": "a-1", "trace": "t.csv", "scenario": "s.yaml",
        "measured": {"iteration_ns": {"median": 100, "min": 90, "p10": 95, "p90": 120,
                                      "samples": 20, "rounds": 2, "round_medians": [99, 101]}},
        "config": {"z": 1, "a": [1.5, "x"]}})";

std::string with(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

TEST_F(DatasetFolder, ReadsAnEntryAndKeepsItsConfigAsWritten) {
  entry("x/y", kEntry);
  const DatasetEntry e = read_dataset_entry(dir_, "x/y/entry.json");
  EXPECT_EQ(e.id, "a-1");
  EXPECT_EQ(e.entry_file, "x/y/entry.json");
  EXPECT_EQ(e.trace, "x/y/t.csv");
  EXPECT_EQ(e.scenario, "x/y/s.yaml");
  EXPECT_EQ(e.iteration.median, Duration(100));
  EXPECT_EQ(e.iteration.round_medians, (std::vector<Duration>{Duration(99), Duration(101)}));
  EXPECT_EQ(e.config.dump(), R"({"z":1,"a":[1.5,"x"]})") << "key order and values kept";
  // The manifest's form reads back to the same entry.
  const JsonFieldReader r("m.json");
  EXPECT_EQ(entry_manifest_json(parse_manifest_entry(entry_manifest_json(e), r, "entries[0]")),
            entry_manifest_json(e));
}

// measured.memory_bytes: optional, read with the same rules as the time,
// kept in the manifest's form.
TEST_F(DatasetFolder, AnEntryMayCarryItsMeasuredMemory) {
  const std::string memory =
      R"("samples": 20, "rounds": 2, "round_medians": [99, 101]},
                     "memory_bytes": {"median": 4096, "min": 4000, "p10": 4050, "p90": 4200,
                                      "samples": 6}})";
  const std::string text =
      with(kEntry, R"("samples": 20, "rounds": 2, "round_medians": [99, 101]}})", memory);
  entry("m", text);
  const DatasetEntry e = read_dataset_entry(dir_, "m/entry.json");
  ASSERT_TRUE(e.memory.has_value());
  EXPECT_EQ(e.memory->median, 4096);
  EXPECT_EQ(e.memory->p90, 4200);
  EXPECT_EQ(e.memory->samples, 6);
  const JsonFieldReader r("m.json");
  const DatasetEntry back = parse_manifest_entry(entry_manifest_json(e), r, "entries[0]");
  EXPECT_EQ(back.memory, e.memory);

  const std::string f = file("e/entry.json");
  EXPECT_EQ(read_error(with(text, R"("p10": 4050)", R"("p10": 3000)")),
            f + ": field 'measured.memory_bytes.p10': 3000 is below min (4000): expected min <= "
                "p10 <= median <= p90");
  EXPECT_EQ(read_error(with(text, R"("median": 4096)", R"("median": -1)")),
            f + ": field 'measured.memory_bytes.median': must be greater than zero, got -1");
  EXPECT_EQ(read_error(with(text, R"("samples": 6)", R"("samples": 6, "rounds": 3)")),
            f + ": field 'measured.memory_bytes.rounds': unknown key (known here: median, min, "
                "p10, p90, samples); free-form values belong under 'config'");
  EXPECT_EQ(read_error(with(kEntry, R"("round_medians": [99, 101]}})",
                            R"("round_medians": [99, 101]}, "memory": 5})")),
            f + ": field 'measured.memory': unknown key (known here: iteration_ns, memory_bytes); "
                "free-form values belong under 'config'");
}

TEST_F(DatasetFolder, EntryErrorsNameTheFileAndTheField) {
  const std::string f = file("e/entry.json");
  EXPECT_EQ(read_error(with(kEntry, R"("p10": 95)", R"("p10": 80)")),
            f + ": field 'measured.iteration_ns.p10': 80 is below min (90): expected min <= p10 "
                "<= median <= p90");
  EXPECT_EQ(read_error(with(kEntry, R"("p90": 120)", R"("p90": 99)")),
            f + ": field 'measured.iteration_ns.p90': 99 is below median (100): expected min <= "
                "p10 <= median <= p90");
  EXPECT_EQ(read_error(with(kEntry, R"("median": 100)", R"("median": 100.5)")),
            f + ": field 'measured.iteration_ns.median': expected a whole number, got the number "
                "100.5");
  EXPECT_EQ(read_error(with(kEntry, R"("min": 90)", R"("min": 0)")),
            f + ": field 'measured.iteration_ns.min': must be greater than zero, got 0");
  EXPECT_EQ(read_error(with(kEntry, R"("median": 100, )", "")),
            f + ": field 'measured.iteration_ns.median': missing");
  EXPECT_EQ(read_error(with(kEntry, R"([99, 101])", R"([99])")),
            f + ": field 'measured.iteration_ns.round_medians': holds 1 values, but rounds is 2");
  EXPECT_EQ(read_error(with(kEntry, R"([99, 101])", R"([99, 89])")),
            f + ": field 'measured.iteration_ns.round_medians': 89 is below min (90): expected "
                "min <= p10 <= median <= p90");
  EXPECT_EQ(read_error(with(kEntry, R"("trace": "t.csv")", R"("trace": 3)")),
            f + ": field 'trace': expected a string, got the number 3");
  EXPECT_EQ(read_error(with(kEntry, R"("trace": "t.csv")", R"("trace": "../../t.csv")")),
            f + ": field 'trace': '../../t.csv' leaves the dataset folder");
  EXPECT_EQ(read_error(with(kEntry, R"("id": "a-1")", R"("id": "a 1")")),
            f + ": field 'id': 'a 1' is not a valid id: use letters, digits, '.', '_' and '-'");
  EXPECT_EQ(read_error(with(kEntry, R"("id": "a-1", )", R"("id": "a-1", "machine": "x", )")),
            f + ": field 'machine': unknown key (known here: id, description, trace, scenario, "
                "measured, predict_from, config); free-form values belong under 'config'");
  EXPECT_EQ(read_error(with(kEntry, R"("config": {"z": 1, "a": [1.5, "x"]})",
                            R"("predict_from": ["a-1"])")),
            f + ": field 'predict_from[0]': 'a-1' is this entry: its replay is always checked; "
                "list other entries here");
  EXPECT_EQ(read_error(with(kEntry, R"("config": {"z": 1, "a": [1.5, "x"]})",
                            R"("predict_from": ["b", "b"])")),
            f + ": field 'predict_from[1]': 'b' is listed twice");
  EXPECT_EQ(read_error(with(kEntry, R"("config": {"z": 1, "a": [1.5, "x"]})", R"("config": 3)")),
            f + ": field 'config': expected an object, got the number 3");
  EXPECT_THAT(read_error("{\"id\": "), HasSubstr(f + ": not valid JSON: "));
}

TEST_F(DatasetFolder, EntriesTogetherHaveUniqueIdsAndKnownPredictFrom) {
  entry("a", kEntry);
  entry("b", with(kEntry, R"("config": {"z": 1, "a": [1.5, "x"]})", R"("predict_from": ["z"])"));
  std::vector<DatasetEntry> entries{read_dataset_entry(dir_, "a/entry.json"),
                                    read_dataset_entry(dir_, "b/entry.json")};
  const auto where = [&](std::size_t i, const std::string& field) {
    return InputLocation{entries[i].entry_file, std::nullopt, std::nullopt, field};
  };
  EXPECT_EQ(error_of([&] { check_dataset_entries(entries, where); }),
            "b/entry.json: field 'id': duplicate id 'a-1': a/entry.json has it too");
  entries[1].id = "b-1";
  EXPECT_EQ(error_of([&] { check_dataset_entries(entries, where); }),
            "b/entry.json: field 'predict_from[0]': no entry has the id 'z'");
}

// A manifest of the folder with one entry, as pack would write it.
DatasetManifest one_entry_manifest(const fs::path& dir) {
  DatasetManifest m;
  m.name = "t";
  m.ssgd_version = "0.1.0";
  m.entries.push_back(read_dataset_entry(dir, "e/entry.json"));
  const DatasetScan scan = scan_dataset(dir);
  m.files = hash_dataset_files(dir, scan.files);
  return m;
}

TEST_F(DatasetFolder, ManifestTextRoundTripsAndIsStable) {
  entry("e", kEntry);
  const DatasetManifest m = one_entry_manifest(dir_);
  const std::string text = manifest_text(m);
  EXPECT_EQ(manifest_text(parse_manifest(text, "m.json")), text);
  EXPECT_TRUE(
      text.starts_with("{\n  \"format\": \"ssgd.dataset.manifest\",\n  \"format_version\": 1,\n  "
                       "\"name\": \"t\",\n"))
      << text;
  ASSERT_EQ(m.files.size(), 3u);
  EXPECT_EQ(m.files[1].path, "e/s.yaml");
  EXPECT_EQ(m.files[1].size_bytes, 8);
  EXPECT_EQ(m.files[1].sha256, sha256_hex("scenario"));
}

TEST_F(DatasetFolder, ManifestSchemaErrorsNameTheField) {
  entry("e", kEntry);
  const std::string text = manifest_text(one_entry_manifest(dir_));
  const auto parse = [](const std::string& t) {
    return error_of([&] { parse_manifest(t, "m.json"); });
  };
  EXPECT_THAT(parse("{\"format\": "), HasSubstr("m.json: not valid JSON: "));
  EXPECT_EQ(parse(with(text, "ssgd.dataset.manifest", "other")),
            "m.json: field 'format': 'other' is not a dataset manifest (expected "
            "'ssgd.dataset.manifest')");
  EXPECT_EQ(parse(with(text, "\"format_version\": 1", "\"format_version\": 2")),
            "m.json: field 'format_version': version 2 is not one this ssgd reads (it reads 1)");
  EXPECT_EQ(parse(with(text, "\"sha256\": \"", "\"sha256\": \"x")),
            "m.json: field 'files[0].sha256': expected 64 lower-case hexadecimal digits");
  EXPECT_EQ(parse(with(text, "\"path\": \"e/entry.json\"", "\"path\": \"../entry.json\"")),
            "m.json: field 'files[0].path': '../entry.json' leaves the dataset folder");
  EXPECT_EQ(parse(with(text, "\"path\": \"e/s.yaml\"", "\"path\": \"e/entry.json\"")),
            "m.json: field 'files[1].path': 'e/entry.json' is listed twice (also files[0])");
  EXPECT_EQ(parse(with(text, "\"path\": \"e/t.csv\"", "\"path\": \"e/u.csv\"")),
            "m.json: field 'entries[0].trace': 'e/t.csv' is not among the listed files");
  EXPECT_EQ(parse(with(text, "\"size_bytes\": 8", "\"size_bytes\": -8")),
            "m.json: field 'files[1].size_bytes': must not be negative, got -8");
  EXPECT_EQ(parse(with(text, "\"median\": 100", "\"median\": \"100\"")),
            "m.json: field 'entries[0].measured.iteration_ns.median': expected a whole number, "
            "got the string \"100\"");
  EXPECT_EQ(parse(with(text, "\"scenario\": \"e/s.yaml\"", "\"scenario\": \"e/../e/s.yaml\"")),
            "m.json: field 'entries[0].scenario': 'e/../e/s.yaml' is not a dataset path in "
            "normal form (expected 'e/s.yaml')");
  EXPECT_EQ(parse(with(text, "\"name\": \"t\",", "")), "m.json: field 'name': missing");
}

class DatasetIntegrity : public DatasetFolder {
 protected:
  void SetUp() override {
    DatasetFolder::SetUp();
    entry("e", kEntry);
    write_file_bytes(dir_ / "manifest.json", manifest_text(one_entry_manifest(dir_)));
  }
  std::vector<std::string> problems() {
    std::vector<std::string> out;
    for (const InputError& e : check_dataset(dir_).problems) out.push_back(e.what());
    return out;
  }
};

TEST_F(DatasetIntegrity, AnIntactFolderHasNoProblem) {
  EXPECT_THAT(problems(), ::testing::IsEmpty());
  // Hidden files and folders are not part of the dataset.
  write_file_bytes(dir_ / ".hidden", "x");
  fs::create_directories(dir_ / "e/.git");
  write_file_bytes(dir_ / "e/.git/config", "x");
  EXPECT_THAT(problems(), ::testing::IsEmpty());
}

TEST_F(DatasetIntegrity, ChangedBytesMissingAndExtraFiles) {
  write_file_bytes(dir_ / "e/s.yaml", "scenariO");
  EXPECT_THAT(problems(), ::testing::ElementsAre(
                              file("e/s.yaml") + ": field 'sha256': changed: its SHA-256 is " +
                              sha256_hex("scenariO") + ", " + file("manifest.json") + " says " +
                              sha256_hex("scenario") + " (files[1])"));
  write_file_bytes(dir_ / "e/s.yaml", "scenario!");
  EXPECT_THAT(problems(),
              ::testing::ElementsAre(file("e/s.yaml") + ": field 'size_bytes': changed: 9 bytes, " +
                                     file("manifest.json") + " says 8 (files[1])"));
  fs::remove(dir_ / "e/s.yaml");
  write_file_bytes(dir_ / "e/extra.txt", "x");
  EXPECT_THAT(
      problems(),
      ::testing::ElementsAre(
          file("e/extra.txt") + ": not listed in " + file("manifest.json") +
              ": added after the dataset was packed (remove it, or run `ssgd dataset "
              "pack` again)",
          file("e/s.yaml") + ": missing: " + file("manifest.json") + " lists it (files[1])"));
}

TEST_F(DatasetIntegrity, SymbolicLinksAreRefused) {
  const fs::path outside = dir_.parent_path() / (dir_.filename().string() + "_outside");
  fs::create_directories(outside);
  write_file_bytes(outside / "t.csv", "trace");
  fs::remove(dir_ / "e/t.csv");
  fs::create_symlink(outside / "t.csv", dir_ / "e/t.csv");
  EXPECT_THAT(
      problems(),
      ::testing::ElementsAre(file("e/t.csv") + ": is a symbolic link; a dataset holds regular "
                                               "files only, so that nothing in it points outside"));
  EXPECT_EQ(error_of([&] { check_dataset_file(dir_, "e/t.csv", kWhere); }),
            "e.json: field 'trace': '" + file("e/t.csv") +
                "' is a symbolic link; a dataset holds regular files only");
  fs::remove_all(outside);
}

TEST_F(DatasetIntegrity, AnEntryEditedInTheManifestAloneIsCaught) {
  const std::string text = testing::read_file_bytes(dir_ / "manifest.json");
  write_file_bytes(dir_ / "manifest.json", with(text, "\"median\": 100", "\"median\": 101"));
  EXPECT_THAT(problems(), ::testing::ElementsAre(file("manifest.json") +
                                                 ": field 'entries[0]': differs from "
                                                 "e/entry.json: the manifest was edited "
                                                 "after packing (run `ssgd dataset pack` "
                                                 "again)"));
}

TEST_F(DatasetIntegrity, NoManifestOrNoFolder) {
  fs::remove(dir_ / "manifest.json");
  EXPECT_EQ(error_of([&] { check_dataset(dir_); }),
            file("manifest.json") + ": no manifest: run `ssgd dataset pack` on the folder first");
  EXPECT_EQ(error_of([&] { scan_dataset(dir_ / "none"); }), file("none") + ": no such folder");
}

}  // namespace
}  // namespace ssgd::trace
