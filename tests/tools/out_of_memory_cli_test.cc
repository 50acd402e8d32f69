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

class OutOfMemoryCliTest : public TempDirTest {
 protected:
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
#ifdef SSGD_OOM_TEST_ASAN
  GTEST_SKIP() << "RLIMIT_AS and AddressSanitizer's shadow memory do not mix";
#else
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
  const CliResult r = run_limited({"import", "chakra", "big.0.et", "-o", "out.ssgdt"},
                                  rlim_t{512} << 20);
  ASSERT_TRUE(r.exited) << r;
  EXPECT_EQ(r.status, 1) << r;
  EXPECT_NE(r.err.find("ssgd: error: out of memory while reading 'big.0.et' (Chakra ET, record "),
            std::string::npos)
      << r;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "out.ssgdt")) << r;
#endif
}

}  // namespace
