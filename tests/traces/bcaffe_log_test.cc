#include "traces/import/bcaffe/bcaffe_log.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include "common/error.h"

namespace ssgd::trace {
namespace {

// The MG-WFBP authors' logs, read in place (see shared/data/README.md).
const std::filesystem::path kBcaffe = std::filesystem::path(SSGD_SOURCE_DIR) / "../shared/data/bcaffe";

#define SSGD_SKIP_WITHOUT_BCAFFE()                                                               \
  if (!std::filesystem::is_directory(kBcaffe)) {                                                 \
    GTEST_SKIP() << "reference data not found at " << kBcaffe.string()                           \
                 << " (../shared/data/bcaffe from the repository root); skipping B-Caffe tests"; \
  }

constexpr const char* kPrefix = "I0214 23:25:29.141575 37187 distributed.cpp:112] ";

std::string line(const std::string& list) { return kPrefix + list + "\n"; }

void expect_error(const std::string& text, std::optional<std::int64_t> at, const std::string& field,
                  const std::string& reason) {
  try {
    parse_bcaffe_log(text, "b.log");
    ADD_FAILURE() << "no error for:\n" << text;
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.where().file, "b.log") << what;
    EXPECT_EQ(e.where().line, at) << what;
    EXPECT_EQ(e.where().field, field) << what;
    std::string prefix = "b.log";
    if (at) prefix += ":" + std::to_string(*at);
    EXPECT_EQ(what.rfind(prefix, 0), 0u) << what;
    if (!field.empty()) {
      EXPECT_NE(what.find("field '" + field + "'"), std::string::npos) << what;
    }
    EXPECT_NE(what.find(reason), std::string::npos) << "expected '" << reason << "' in: " << what;
  }
}

// --- the shared reference logs ----------------------------------------------

// Every log in the folder reads as GoogLeNet: 128 gradient tensors, a weight
// and a bias per layer, 13,379,136 fp32 parameters.
TEST(BcaffeLog, EverySharedLogParses) {
  SSGD_SKIP_WITHOUT_BCAFFE();
  for (const char* name :
       {"tmpcomm.log", "tmp2comm.log", "tmp4comm.log", "tmp8comm.log", "tmp4ocomm.log", "tmp8ocomm.log"}) {
    SCOPED_TRACE(name);
    const LayerProfile p = read_bcaffe_log(kBcaffe / name);
    EXPECT_EQ(p.layers.size(), 64u);
    EXPECT_EQ(p.total_grad_bytes(), 53516544);
    EXPECT_TRUE(p.has_comm());
    EXPECT_EQ(p.model, "GoogLeNet (B-Caffe)");
    EXPECT_EQ(p.batch_per_gpu, 64);
    EXPECT_EQ(p.provenance,
              std::string("measured: B-Caffe log ") + name + ", forward = backward/2 per the authors' simulator");
    EXPECT_EQ(p.layers.front().name, "layer0_params0-1");
    EXPECT_EQ(p.layers.back().name, "layer63_params126-127");
    EXPECT_GT(p.total_backward(), Duration(150'000'000));  // GoogLeNet backward on a K80: ~0.2 s
    EXPECT_LT(p.total_backward(), Duration(250'000'000));
    EXPECT_LE(std::llabs(2 * p.total_forward().ns() - p.total_backward().ns()),
              static_cast<long long>(p.layers.size()));
  }
}

// Golden totals for the 8-node log, worked out by hand from the file's
// second dump (lines 129-256): 64 distinct compute_time values summing to
// 205,334.312 us, communication_time summing to 310,738 us, sizes summing to
// 13,379,136 elements.
TEST(BcaffeLog, EightNodeTotals) {
  SSGD_SKIP_WITHOUT_BCAFFE();
  const LayerProfile p = read_bcaffe_log(kBcaffe / "tmp8comm.log");
  ASSERT_EQ(p.layers.size(), 64u);
  EXPECT_EQ(p.total_grad_bytes(), 4 * 13'379'136);
  EXPECT_EQ(p.total_backward(), Duration(205'334'312));
  Duration comm;
  for (const LayerRow& row : p.layers) comm += *row.comm;
  EXPECT_EQ(comm, Duration(310'738'000));
  EXPECT_LE(std::llabs(2 * p.total_forward().ns() - p.total_backward().ns()), 32);

  // First layer: conv1 weight (9408) and bias (64), 15143.7 us, 1169 us + 0 us.
  const LayerRow& first = p.layers.front();
  EXPECT_EQ(first.layer, 0);
  EXPECT_EQ(first.backward, Duration(15'143'700));
  EXPECT_EQ(first.forward, Duration(7'571'850));
  EXPECT_EQ(first.grad_bytes, 4 * (9408 + 64));
  EXPECT_EQ(first.comm, Duration(1'169'000));
  // Last layer: the classifier, 461.088 us, 1024000 + 1024 elements.
  const LayerRow& last = p.layers.back();
  EXPECT_EQ(last.layer, 63);
  EXPECT_EQ(last.backward, Duration(461'088));
  EXPECT_EQ(last.forward, Duration(230'544));
  EXPECT_EQ(last.grad_bytes, 4 * (1'024'000 + 1024));
  EXPECT_EQ(last.comm, Duration(24'282'000));
}

// tmp2comm.log starts with a dump of zeros, logged before the first timed
// iteration; the second dump is the one read.
TEST(BcaffeLog, SkipsTheLeadingZeroDump) {
  SSGD_SKIP_WITHOUT_BCAFFE();
  const LayerProfile p = read_bcaffe_log(kBcaffe / "tmp2comm.log");
  EXPECT_EQ(p.layers.front().backward, Duration(14'690'200));
  EXPECT_EQ(p.layers.front().comm, Duration((298 + 106) * 1000));
  EXPECT_EQ(p.total_backward(), Duration(200'329'300));
}

// --- synthetic logs ------------------------------------------------------------

TEST(BcaffeLog, GroupsEqualComputeTimesIntoLayers) {
  const std::string text = "log file opened\n" + line("[0, 10, 100.5, 3]") + line("[1, 2, 100.5, 4]") +
                           "I0214 some other glog line\r\n" + line("[2, 5, 7.25, 0]") + line("[3, 1, 100.5, 1]");
  const LayerProfile p = parse_bcaffe_log(text, "dir/b.log");
  EXPECT_EQ(p.source, "dir/b.log");
  EXPECT_EQ(p.provenance, "measured: B-Caffe log b.log, forward = backward/2 per the authors' simulator");
  ASSERT_EQ(p.layers.size(), 3u);
  EXPECT_EQ(p.layers[0].name, "layer0_params0-1");
  EXPECT_EQ(p.layers[0].backward, Duration(100'500));
  EXPECT_EQ(p.layers[0].forward, Duration(50'250));
  EXPECT_EQ(p.layers[0].grad_bytes, 48);
  EXPECT_EQ(p.layers[0].comm, Duration(7'000));
  EXPECT_EQ(p.layers[1].name, "layer1_params2-2");
  EXPECT_EQ(p.layers[1].backward, Duration(7'250));
  EXPECT_EQ(p.layers[1].forward, Duration(3'625));
  EXPECT_EQ(p.layers[1].comm, Duration(0));
  // Equal to layer 0's time but not adjacent to it: a layer of its own.
  EXPECT_EQ(p.layers[2].name, "layer2_params3-3");
  EXPECT_EQ(p.layers[2].layer, 2);
}

TEST(BcaffeLog, RoundsMicrosecondsToNearestNanosecond) {
  const LayerProfile p = parse_bcaffe_log(line("[0, 1, 0.0015, 0.0024]") + line("[1, 1, 0.003, 0.0005]"), "b.log");
  ASSERT_EQ(p.layers.size(), 2u);
  EXPECT_EQ(p.layers[0].backward, Duration(2));  // 1.5 ns, half away from zero
  EXPECT_EQ(p.layers[0].forward, Duration(1));   // 0.75 ns
  EXPECT_EQ(p.layers[0].comm, Duration(2));
  EXPECT_EQ(p.layers[1].backward, Duration(3));
  EXPECT_EQ(p.layers[1].forward, Duration(2));   // 1.5 ns
  EXPECT_EQ(p.layers[1].comm, Duration(1));      // 0.5 ns
}

TEST(BcaffeLog, FiveFieldLinesIgnoreMergedTime) {
  const LayerProfile p = parse_bcaffe_log(line("[0, 4, 10, 2, 99]") + line("[1, 4, 10, 0, 0]"), "b.log");
  ASSERT_EQ(p.layers.size(), 1u);
  EXPECT_EQ(p.layers[0].comm, Duration(2'000));
  EXPECT_EQ(p.layers[0].grad_bytes, 32);
}

TEST(BcaffeLog, ReadsTheLastCompleteNonZeroDump) {
  const std::string zeros = line("[0, 4, 0, 0]") + line("[1, 4, 0, 0]") + line("[2, 4, 0, 0]");
  const std::string first = line("[0, 4, 10, 1]") + line("[1, 4, 20, 1]") + line("[2, 4, 30, 1]");
  const std::string second = line("[0, 4, 11, 2]") + line("[1, 4, 21, 2]") + line("[2, 4, 31, 2]");
  const std::string partial = line("[0, 4, 12, 3]") + line("[1, 4, 22, 3]");

  // Zeros first, as in tmp2comm.log: the timed dump is read.
  EXPECT_EQ(parse_bcaffe_log(zeros + first, "b.log").total_backward(), Duration(60'000));
  // Zeros last: skipped, the timed dump before it is read.
  EXPECT_EQ(parse_bcaffe_log(first + zeros, "b.log").total_backward(), Duration(60'000));
  // Two timed dumps: the last one.
  EXPECT_EQ(parse_bcaffe_log(first + second, "b.log").total_backward(), Duration(63'000));
  // A dump cut short at the end of the log is not complete.
  const LayerProfile p = parse_bcaffe_log(zeros + second + partial, "b.log");
  EXPECT_EQ(p.total_backward(), Duration(63'000));
  EXPECT_EQ(p.layers.size(), 3u);
  // A single short dump is the longest, so complete.
  EXPECT_EQ(parse_bcaffe_log(partial, "b.log").layers.size(), 2u);
}

TEST(BcaffeLog, ToleratesCrlfAndSpacing) {
  const LayerProfile p = parse_bcaffe_log(std::string(kPrefix) + "[0,4,10,2]  \r\n" + kPrefix + "[ 1 , 4 , 10 , 0 ]\r\n",
                                          "b.log");
  ASSERT_EQ(p.layers.size(), 1u);
  EXPECT_EQ(p.layers[0].grad_bytes, 32);
}

TEST(BcaffeLogErrors, MalformedLists) {
  const std::string ok = line("[0, 4, 10, 2]");
  expect_error(ok + line("[1, 4, 10]"), 2, "communication_time", "list has 3 fields, expected 4 or 5");
  expect_error(ok + line("[]"), 2, "param_id", "list has 0 fields");
  expect_error(ok + line("[1, 4, 10, 2, 3, 4]"), 2, "field 6", "list has 6 fields, expected 4 or 5");
  expect_error(ok + kPrefix + "[1, 4, 10, 2\n", 2, "", "does not end in ']'");
  expect_error(ok + kPrefix + "[1, 4, 10, 2] trailing\n", 2, "", "does not end in ']'");
  expect_error(ok + kPrefix + "[1, 4, 10, 2]]\n", 2, "", "text after the bracketed list");
  expect_error(ok + line("[x, 4, 10, 2]"), 2, "param_id", "expected a non-negative integer, got 'x'");
  expect_error(ok + line("[1, 4.5, 10, 2]"), 2, "size", "expected a non-negative integer, got '4.5'");
  expect_error(ok + line("[1, -4, 10, 2]"), 2, "size", "negative value -4");
  expect_error(ok + line("[1, 99999999999999999999, 10, 2]"), 2, "size", "does not fit in int64");
  expect_error(ok + line("[1, 4611686018427387904, 10, 2]"), 2, "size", "does not fit in int64 bytes");
  expect_error(ok + line("[1, 4, fast, 2]"), 2, "compute_time", "expected a time in microseconds, got 'fast'");
  expect_error(ok + line("[1, 4, 10, -2]"), 2, "communication_time", "negative time -2");
  expect_error(ok + line("[1, 4, 10, 2, nan]"), 2, "merged_time", "expected a time in microseconds");
  expect_error(ok + line("[1, 4, , 2]"), 2, "compute_time", "missing value");
  expect_error(ok + line("[1, 4, 1e300, 2]"), 2, "compute_time", "time 1e300 us exceeds 2^42 ns");
}

// The limits of every layer profile (traces/layer_profile.h), so that what
// `ssgd import bcaffe` writes the CSV reader reads back (found by
// fuzz/bcaffe_log_fuzzer).
TEST(BcaffeLogErrors, SumsBeyondTheProfileLimits) {
  // 2^48 elements of 4 bytes: 2^50 bytes in the first tensor, one more byte after.
  expect_error(line("[0, 281474976710656, 10, 2]") + line("[1, 1, 10, 2]"), 2, "size",
               "the gradients of the tensors so far exceed 2^50 bytes");
  // Two tensors of one layer (same compute time) whose communication adds past 2^42 ns.
  expect_error(line("[0, 4, 10, 4000000000]") + line("[1, 4, 10, 1000000000]"), 2,
               "communication_time", "the communication time of the layer exceeds 2^42 ns");
}

TEST(BcaffeLogErrors, ParamIds) {
  expect_error("header\n" + line("[1, 4, 10, 2]"), 2, "param_id", "param_id 1 out of order: expected 0");
  expect_error(line("[0, 4, 10, 2]") + line("[1, 4, 10, 2]") + line("[3, 4, 10, 2]"), 3, "param_id",
               "param_id 3 out of order: expected 2 or 0 (a new dump)");
  expect_error(line("[0, 4, 10, 2]") + line("[0, 4, 10, 2]") + line("[0, 4, 10, 2]") + line("[2, 4, 10, 2]"), 4,
               "param_id", "expected 1 or 0");
}

TEST(BcaffeLogErrors, NoUsableDump) {
  expect_error("", std::nullopt, "", "no bracketed lists found");
  expect_error("I0214 nothing to see\n", std::nullopt, "", "no bracketed lists found");
  expect_error(line("[0, 4, 0, 0]") + line("[1, 4, 0, 0]"), std::nullopt, "",
               "no complete dump with non-zero times: 1 dump(s) found");
  // The timed dump is cut short; the complete one holds only zeros.
  expect_error(line("[0, 4, 0, 0]") + line("[1, 4, 0, 0]") + line("[0, 4, 5, 1]"), std::nullopt, "",
               "no complete dump with non-zero times: 2 dump(s) found, of up to 2 tensors");
}

TEST(BcaffeLogErrors, MissingFile) {
  try {
    read_bcaffe_log("no_such_dir/tmp.log");
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("no_such_dir/tmp.log: cannot read B-Caffe log"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace ssgd::trace
