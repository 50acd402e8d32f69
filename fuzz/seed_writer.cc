// Writes the generated seeds of the fuzz targets into a folder, one
// subfolder per target: the PyTorch profiler files and rank traces the test
// suite builds in code (tests/support), so the fuzzers start from the same
// shapes the tests pin. fuzz/collect_seeds.sh runs it; nothing it writes is
// checked in.
//
//   ssgd_fuzz_seed_writer OUT_DIR

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/support/kineto_json_writer.h"
#ifdef SSGD_WITH_NSYS_IMPORT
#include "tests/support/nsys_sqlite_writer.h"
#endif
#include "tests/support/rank_files.h"
#include "tests/support/torch_cpu_profile_writer.h"

namespace fs = std::filesystem;
namespace t = ssgd::testing;

namespace {

std::string read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_all(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

void kineto_seeds(const fs::path& dir) {
  fs::create_directories(dir);
  t::write_two_step_training(dir / "two_step.json");
  t::KinetoJsonOptions after;
  after.metadata_after_events = true;
  after.nccl_meta_on_kernels = false;
  t::write_two_step_training(dir / "two_step_metadata_after.json", after);
  t::KinetoJsonOptions sparse;
  sparse.drop_optional = true;
  sparse.with_distributed_info = false;
  sparse.shuffle = true;
  t::write_two_step_training(dir / "two_step_sparse_shuffled.json", sparse);
  t::KinetoJsonOptions modules;
  modules.module_ranges = true;
  modules.stray_backward = true;
  t::write_plain_training(dir / "plain_modules.json", modules);
  t::write_plain_training(dir / "plain.json");

  t::TorchCpuProfileOptions legacy;
  legacy.iterations = 1;
  t::write_torch_cpu_profile(dir / "legacy.json", legacy);
  t::TorchCpuProfileOptions legacy_cpp = legacy;
  legacy_cpp.writer = t::TorchCpuProfileOptions::Writer::kLegacyCpp;
  legacy_cpp.marks = true;
  legacy_cpp.metadata = true;
  t::write_torch_cpu_profile(dir / "legacy_cpp_marked.json", legacy_cpp);
  t::TorchCpuProfileOptions cpu = legacy;
  cpu.writer = t::TorchCpuProfileOptions::Writer::kKineto;
  cpu.profiler_steps = true;
  cpu.record_shapes = true;
  t::write_torch_cpu_profile(dir / "kineto_cpu.json", cpu);
}

// Two ranks on one host, and two hosts with clock calibrations; the merge
// target's layout: an options byte, then the rank files, each followed by
// the separator.
void rank_seeds(const fs::path& container_dir, const fs::path& merge_dir, const fs::path& scratch) {
  fs::create_directories(container_dir);
  fs::create_directories(merge_dir);
  const std::string next = "\nSSGD-FUZZ-NEXT-RANK\n";

  struct Case {
    std::string name;
    std::vector<t::RankFileSpec> ranks;
    char options;
  };
  std::vector<Case> cases;
  {
    t::RankFileSpec r0{
        .rank = 0, .events = {t::kernel_event(0, 100, 200, "gemm"), t::kernel_event(0, 300, 350)}};
    t::RankFileSpec r1{
        .rank = 1, .events = {t::kernel_event(1, 120, 220, "gemm"), t::kernel_event(1, 320, 390)}};
    cases.push_back({"one_host", {r0, r1}, 0});
  }
  {
    t::RankFileSpec r0{.rank = 0, .hostname = "a", .events = {t::kernel_event(0, 1000, 2000)}};
    t::RankFileSpec r1{.rank = 1,
                       .hostname = "b",
                       .calibration = t::calibration("a", -500, 20, 900),
                       .events = {t::kernel_event(1, 1500, 2500), t::kernel_event(1, 2600, 2700)},
                       .footer_calibration = t::calibration("a", -510, 25, 3000)};
    cases.push_back({"two_hosts", {r0, r1}, 0});
  }
  {
    t::RankFileSpec r0{
        .rank = 0, .world_size = 3, .hostname = "a", .events = {t::kernel_event(0, 10, 20)}};
    t::RankFileSpec r2{
        .rank = 2, .world_size = 3, .hostname = "c", .events = {t::kernel_event(2, 15, 25)}};
    cases.push_back({"missing_rank_forced", {r0, r2}, 1});
  }
  for (const Case& c : cases) {
    std::string merged(1, c.options);
    for (const t::RankFileSpec& spec : c.ranks) {
      fs::remove_all(scratch);
      fs::create_directories(scratch);
      const std::string bytes = read_all(t::write_rank_file(scratch, spec));
      merged += bytes + next;
      write_all(container_dir / (c.name + "_rank" + std::to_string(spec.rank) + ".ssgdt"), bytes);
    }
    write_all(merge_dir / (c.name + ".bin"), merged);
  }
  fs::remove_all(scratch);
}

#ifdef SSGD_WITH_NSYS_IMPORT
// Nsight Systems exports: the tests' training step, and one without NCCL
// ranges and target info (collectives of unknown size, clock UNSPECIFIED).
void nsys_seeds(const fs::path& dir) {
  fs::create_directories(dir);
  t::NsysTrainingOptions small;
  small.iterations = 1;
  t::write_nsys_export(dir / "two_layer_training.sqlite", t::nsys_two_layer_training(small));
  small.nccl_ranges = false;
  small.target_info = false;
  small.rank_mark = false;
  t::write_nsys_export(dir / "no_nccl_ranges.sqlite", t::nsys_two_layer_training(small));
}
#endif

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
    return 2;
  }
  const fs::path out = argv[1];
  kineto_seeds(out / "kineto_json");
#ifdef SSGD_WITH_NSYS_IMPORT
  nsys_seeds(out / "nsys_sqlite");
#endif
  rank_seeds(out / "trace_container", out / "trace_merge", out / ".scratch");
  return 0;
}
