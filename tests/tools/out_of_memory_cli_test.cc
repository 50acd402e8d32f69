// An out-of-memory exit names the input and the stage (issue 33, point 5):
// `ssgd` run as a process under a small address-space limit (RLIMIT_AS, set
// in the child before exec) on an input whose reading needs more than the
// limit. Skipped under AddressSanitizer, whose shadow memory cannot live
// under such a limit.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <string>

#include "tests/support/cli_runner.h"
#include "tests/support/test_files.h"
#include "traces/chakra/protobuf_wire.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SSGD_OOM_TEST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(SSGD_OOM_TEST_ASAN)
#define SSGD_OOM_TEST_ASAN 1
#endif

namespace {

using ssgd::chakra::WireWriter;
using ssgd::testing::CliResult;
using ssgd::testing::run_cli;
using ssgd::testing::TempDirTest;
using ssgd::testing::write_file_bytes;

std::string record(const std::string& message) {
  WireWriter len;
  len.varint(message.size());
  return len.bytes() + message;
}

// A text trace of `kernels` kernels of one rank, for ssgd pack.
std::string kernels_text(int kernels) {
  std::string text =
      "metadata { tool: \"t\" world_size: 1 hosts { hostname: \"h\" gpus { device_id: 0 } } }\n";
  const std::string event =
      "events { rank: 0 kernel { name: \"k\" device: 0 stream: 7 start_ns: 1000 end_ns: 2000 } }\n";
  text.reserve(text.size() + static_cast<std::size_t>(kernels) * event.size());
  for (int i = 0; i < kernels; ++i) text += event;
  return text;
}

class OutOfMemoryCliTest : public TempDirTest {
 protected:
  void SetUp() override {
#ifdef SSGD_OOM_TEST_ASAN
    GTEST_SKIP() << "RLIMIT_AS and AddressSanitizer's shadow memory do not mix";
#endif
    TempDirTest::SetUp();
  }

  // The run exited with `status`, its message holds `phrase`, and `output`
  // was not left behind.
  void expect_out_of_memory(const CliResult& r, int status, const std::string& phrase,
                            const std::string& output) {
    ASSERT_TRUE(r.exited) << r;
    EXPECT_EQ(r.status, status) << r;
    EXPECT_NE(r.err.find(phrase), std::string::npos) << r;
    EXPECT_FALSE(std::filesystem::exists(dir_ / output)) << r;
  }

  CliResult run_limited(const std::vector<std::string>& args, rlim_t bytes) {
    const std::filesystem::path scratch = dir_.string() + "_out";
    std::filesystem::create_directories(scratch);
    auto r = run_cli(SSGD_CLI, args, dir_, scratch, [bytes] {
      const rlimit limit{bytes, bytes};
      ::setrlimit(RLIMIT_AS, &limit);
    });
    std::filesystem::remove_all(scratch);
    return r;
  }
};

TEST_F(OutOfMemoryCliTest, ReadingAChakraEtNamesTheFileAndTheRecord) {
  // 3 million valid COMP_NODEs of about 7 bytes each (about 20 MB): the
  // import holds each as a node and a graph node, well over 1 GB in all.
  std::string et = record("");
  for (std::uint64_t id = 0; id < 3000000; ++id) {
    WireWriter node;
    node.varint_field(1, id);
    node.bytes_field(2, "n");
    node.varint_field(3, 4);
    et += record(node.bytes());
  }
  write_file_bytes(dir_ / "big.0.et", et);
  const CliResult r =
      run_limited({"import", "chakra", "big.0.et", "-o", "out.ssgdt"}, rlim_t{512} << 20);
  expect_out_of_memory(
      r, 1, "ssgd: error: out of memory while reading 'big.0.et' (Chakra ET, record ", "out.ssgdt");
}

// Each case below runs in well under 2 s: the input is made so that the stage
// named needs several times the limit at once.

TEST_F(OutOfMemoryCliTest, SimulateNamesTheStageOfTheReplayAndItsInput) {
  // 20,000 layers on 64 unfolded ranks: about 2.6e7 tasks (the estimate says
  // 380 MiB, under the machine's memory, so it is let through); 300 MiB of
  // address space holds the graph but not its run. The replay says it as its
  // refusal would (exit 2, at the key that drives it), now with the input.
  std::string csv = "layer,name,forward_ns,backward_ns,grad_bytes\n";
  for (int i = 0; i < 20000; ++i)
    csv += std::to_string(i) + ",l" + std::to_string(i) + ",1000,2000,4096\n";
  write_file_bytes(dir_ / "big.csv", csv);
  const CliResult r = run_limited({"simulate", "big.csv", "-q", "--allow-large", "--no-fold",
                                   "--set", "cluster.nodes=64", "--report", "r.json"},
                                  rlim_t{300} << 20);
  expect_out_of_memory(r, 2,
                       "ssgd: error: --set: field 'cluster.nodes': out of memory while simulating "
                       "the task graph of 'big.csv' (64 node(s) x 1 GPU(s)",
                       "r.json");
}

TEST_F(OutOfMemoryCliTest, ImportPytorchNamesTheFileAndTheRecord) {
  // Three kernels, then one whose name is 96 MiB: the JSON reader holds the
  // name (and its lexer's copy) while it reads record 3.
  std::string json = "{\"schemaVersion\":1,\"traceEvents\":[";
  for (int i = 0; i < 3; ++i) {
    json += "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":1,\"tid\":1,\"ts\":" +
            std::to_string(1000 + 2 * i) + ",\"dur\":1},";
  }
  json += "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"" + std::string(std::size_t{96} << 20, 'n') +
          "\",\"pid\":1,\"tid\":1,\"ts\":5000,\"dur\":1}]}";
  write_file_bytes(dir_ / "big.json", json);
  json.clear();
  json.shrink_to_fit();
  const CliResult r =
      run_limited({"import", "pytorch", "big.json", "-o", "out.ssgdt"}, rlim_t{200} << 20);
  expect_out_of_memory(r, 1,
                       "ssgd: error: out of memory while reading 'big.json' (profiler trace JSON, "
                       "record 3); see docs/performance.md",
                       "out.ssgdt");
}

TEST_F(OutOfMemoryCliTest, PackNamesTheTextTrace) {
  // 300,000 kernels (26 MB of text): protobuf's text parser holds them all,
  // several hundred MB, before the first is checked.
  const std::string text = kernels_text(300000);
  write_file_bytes(dir_ / "big.txtpb", text);
  const CliResult r = run_limited({"pack", "big.txtpb", "-o", "out.ssgdt"}, rlim_t{200} << 20);
  expect_out_of_memory(r, 1,
                       "ssgd: error: out of memory while reading 'big.txtpb' (text trace); see "
                       "docs/performance.md",
                       "out.ssgdt");
}

TEST_F(OutOfMemoryCliTest, MergeNamesTheRankFileItsChunkAndEvent) {
  // A rank file of 200,000 kernels, packed without a limit: merge holds every
  // event of a rank file (about 300 B each) and 40 MiB of address space runs
  // out while the reader is in the middle of the file.
  const std::string text = kernels_text(200000);
  write_file_bytes(dir_ / "t.txtpb", text);
  std::filesystem::create_directories(dir_ / "run");
  const CliResult packed =
      run_limited({"pack", "t.txtpb", "-o", "run/rank-0.ssgdt"}, RLIM_INFINITY);
  ASSERT_EQ(packed.status, 0) << packed;
  const CliResult r = run_limited({"merge", "run", "-o", "merged.ssgdt"}, rlim_t{40} << 20);
  ASSERT_TRUE(r.exited) << r;
  EXPECT_EQ(r.status, 1) << r;
  EXPECT_NE(r.err.find("ssgd: error: out of memory while reading 'run/rank-0.ssgdt' (ssgd trace, "
                       "chunk "),
            std::string::npos)
      << r;
  EXPECT_NE(r.err.find(", event "), std::string::npos) << r;
  EXPECT_NE(r.err.find(") for merging 'run' (rank 0); see docs/performance.md"), std::string::npos)
      << r;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "merged.ssgdt")) << r;
}

}  // namespace
