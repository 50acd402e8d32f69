#pragma once
// A small dataset folder (docs/datasets.md) built from the test data, for
// the tests of `ssgd dataset pack|verify`:
//
//   README.md                 a file that is no entry's, hashed like the rest
//   shared/network.yaml       a network calibration that two scenarios name
//   tiny/w2/                  tiny-w2: good.csv on 2 nodes x 1 GPU
//   tiny/w4/                  tiny-w4: with_comm.csv on 4 nodes, predicted from tiny-w2
//   marked/                   marked: marked.txtpb packed into a trace, 2 GPUs on one node
//
// Each entry folder holds entry.json, its input and scenario.yaml; the
// measured times are invented but consistent.

#include <filesystem>
#include <string>

#include "tests/support/test_files.h"
#include "traces/trace_dump.h"

namespace ssgd::testing {

inline const std::filesystem::path kTestData =
    std::filesystem::path(SSGD_SOURCE_DIR) / "tests/data";

// entry.json for `id` with median `median_ns` (min, p10 and p90 around it).
inline std::string dataset_entry_json(const std::string& id, const std::string& trace,
                                      std::int64_t median_ns,
                                      const std::string& predict_from = "") {
  return "{\n  \"id\": \"" + id + "\",\n  \"description\": \"test entry " + id +
         "\",\n  \"trace\": \"" + trace + "\",\n  \"scenario\": \"scenario.yaml\",\n" +
         "  \"measured\": {\"iteration_ns\": {\"median\": " + std::to_string(median_ns) +
         ", \"min\": " + std::to_string(median_ns - 300) +
         ", \"p10\": " + std::to_string(median_ns - 100) +
         ", \"p90\": " + std::to_string(median_ns + 200) +
         ", \"samples\": 40, \"rounds\": 2, \"round_medians\": [" + std::to_string(median_ns - 50) +
         ", " + std::to_string(median_ns + 50) + "]}},\n" +
         (predict_from.empty() ? "" : "  \"predict_from\": [\"" + predict_from + "\"],\n") +
         "  \"config\": {\"world_size\": 2, \"link\": \"1gbit\", \"bucket_mb\": 25.5}\n}\n";
}

inline void write_test_dataset(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  fs::create_directories(dir / "shared");
  fs::create_directories(dir / "tiny/w2");
  fs::create_directories(dir / "tiny/w4");
  fs::create_directories(dir / "marked");
  write_file_bytes(dir / "README.md", "A dataset for the tests of ssgd dataset pack|verify.\n");
  write_file_bytes(dir / "shared/network.yaml",
                   "ssgd_network_calibration: 1\n"
                   "level: inter_node\n"
                   "collectives:\n"
                   "  - op: all_reduce\n"
                   "    algorithm: ring\n"
                   "    bands:\n"
                   "      - {max_bytes: inf, latency: 20us, bandwidth: 100MB/s}\n");
  const std::string calibrated =
      "network:\n  inter_node: 10gbe\n"
      "  calibration: ../../shared/network.yaml\n";
  fs::copy_file(kTestData / "profiles/good.csv", dir / "tiny/w2/profile.csv");
  write_file_bytes(dir / "tiny/w2/scenario.yaml",
                   "iterations: 4\ncluster:\n  nodes: 2\n  gpus_per_node: 1\n" + calibrated);
  write_file_bytes(dir / "tiny/w2/entry.json", dataset_entry_json("tiny-w2", "profile.csv", 9000));
  fs::copy_file(kTestData / "profiles/with_comm.csv", dir / "tiny/w4/profile.csv");
  write_file_bytes(dir / "tiny/w4/scenario.yaml",
                   "iterations: 4\ncluster:\n  nodes: 4\n  gpus_per_node: 1\n" + calibrated);
  write_file_bytes(dir / "tiny/w4/entry.json",
                   dataset_entry_json("tiny-w4", "profile.csv", 11000, "tiny-w2"));
  trace::pack_text_trace(kTestData / "traces/marked.txtpb", dir / "marked/marked.ssgdt");
  write_file_bytes(dir / "marked/scenario.yaml",
                   "iterations: 3\ncluster:\n  nodes: 1\n  gpus_per_node: 2\n");
  write_file_bytes(dir / "marked/entry.json", dataset_entry_json("marked", "marked.ssgdt", 50000));
}

}  // namespace ssgd::testing
