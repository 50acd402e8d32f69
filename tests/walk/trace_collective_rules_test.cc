// What the walker and the layer profile do with collectives that a replay
// cannot take at face value (issue 33): without a size, of a kind the S-SGD
// replay does not model, recorded twice, with a missing start time; and an
// iteration number marked twice. Each is replayed at its measured duration
// with a warning, or refused naming the file, the record and the field.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "common/error.h"
#include "walk/trace_profile.h"
#include "tests/support/test_files.h"
#include "traces/trace_reader.h"
#include "traces/trace_writer.h"

namespace ssgd::walk {
namespace {

namespace fs = std::filesystem;
namespace v1 = trace::v1;
using ::testing::Contains;
using ::testing::HasSubstr;

class TraceCollectiveRules : public ssgd::testing::TempDirTest {
 protected:
  void marker(const std::string& name, std::int64_t start, std::int64_t end) {
    v1::Event e;
    e.mutable_marker()->set_name(name);
    e.mutable_marker()->set_start_ns(start);
    e.mutable_marker()->set_end_ns(end);
    events_.push_back(e);
  }
  void kernel(std::int64_t start, std::int64_t end) {
    v1::Event e;
    e.mutable_kernel()->set_name("k");
    e.mutable_kernel()->set_start_ns(start);
    e.mutable_kernel()->set_end_ns(end);
    events_.push_back(e);
  }
  void collective(v1::Collective::Op op, std::uint64_t seq, std::int64_t bytes, std::int64_t start,
                  std::int64_t end) {
    v1::Event e;
    auto* c = e.mutable_collective();
    c->set_op(op);
    c->set_communicator_id(7);
    c->set_nranks(2);
    c->set_sequence_number(seq);
    c->set_size_bytes(bytes);
    c->set_start_ns(start);
    c->set_end_ns(end);
    events_.push_back(e);
  }
  // Three iterations of one layer, its backward launching a collective of
  // `op` and `bytes` lasting 40 us.
  void training(v1::Collective::Op op, std::int64_t bytes) {
    for (int i = 0; i < 3; ++i) {
      const std::int64_t s = 1'000'000 * (i + 1);
      marker("iteration/" + std::to_string(i), s, s + 900'000);
      marker("forward/fc", s + 1000, s + 100'000);
      kernel(s + 2000, s + 90'000);
      marker("backward/fc", s + 200'000, s + 400'000);
      kernel(s + 210'000, s + 390'000);
      collective(op, static_cast<std::uint64_t>(i), bytes, s + 395'000, s + 435'000);
    }
  }
  fs::path write() {
    const fs::path path = dir_ / "t.ssgdt";
    v1::CaptureMetadata m;
    m.set_tool("test");
    m.add_hosts()->set_hostname("n");
    trace::TraceWriter w(path, m);
    for (const auto& e : events_) w.append(e);
    w.close();
    return path;
  }
  TraceProfileResult profile() {
    auto reader = trace::TraceReader::open(write());
    return profile_from_trace(reader, "t.ssgdt");
  }
  InputError error() {
    try {
      (void)profile();
    } catch (const InputError& e) {
      EXPECT_EQ(e.where().file, "t.ssgdt");
      return e;
    }
    ADD_FAILURE() << "no InputError";
    return InputError({}, "none");
  }
  std::vector<v1::Event> events_;
};

TEST_F(TraceCollectiveRules, CollectivesWithoutSizeReplayAtTheirMeasuredDurationsWithAWarning) {
  training(v1::Collective::ALL_REDUCE, 0);
  const TraceProfileResult r = profile();
  ASSERT_EQ(r.profile.layers.size(), 1u);
  EXPECT_EQ(r.profile.layers[0].comm, Duration(40'000));  // the measured duration
  EXPECT_EQ(r.profile.layers[0].grad_bytes, 0);
  // The two steady iterations' collectives; the first is warm-up.
  EXPECT_EQ(r.profile.measured_only.without_size, 2);
  EXPECT_EQ(r.profile.measured_only.other_kind, 0);
  EXPECT_EQ(r.profile.measured_only.first_field, "collective.size_bytes");
  EXPECT_EQ(r.profile.measured_only.first_record, 11);  // iteration 1's collective
  EXPECT_THAT(r.warnings, Contains(HasSubstr("2 collective(s) had no size; replayed at their "
                                             "measured durations (first: record 11)")));
  EXPECT_THAT(r.warnings, Contains(HasSubstr("ssgd_marks")));
  EXPECT_THAT(r.warnings, Contains(HasSubstr("record_shapes=True")));
}

TEST_F(TraceCollectiveRules, SizedAllReducesAreNotMeasuredOnly) {
  training(v1::Collective::ALL_REDUCE, 4096);
  const TraceProfileResult r = profile();
  EXPECT_EQ(r.profile.layers[0].grad_bytes, 4096);
  EXPECT_FALSE(r.profile.measured_only.any());
}

TEST_F(TraceCollectiveRules, GradBytesMarksSupplyTheSizesTheCollectivesLack) {
  training(v1::Collective::ALL_REDUCE, 0);
  marker("ssgd/grad_bytes/fc=2048", 1'000'010, 1'000'010);
  const TraceProfileResult r = profile();
  EXPECT_EQ(r.profile.layers[0].grad_bytes, 2048);
  EXPECT_FALSE(r.profile.measured_only.any());
}

// Send, receive, all-to-all and UNKNOWN are no gradient collective: their
// time is replayed as measured, their bytes are not gradient bytes.
TEST_F(TraceCollectiveRules, KindsTheReplayDoesNotModelAreMeasuredOnly) {
  for (const auto op : {v1::Collective::SEND, v1::Collective::ALL_TO_ALL,
                        v1::Collective::UNKNOWN, v1::Collective::RECV}) {
    events_.clear();
    training(op, 4096);
    const TraceProfileResult r = profile();
    const std::string kind = v1::Collective::Op_Name(op);
    EXPECT_EQ(r.profile.layers[0].comm, Duration(40'000)) << kind;
    EXPECT_EQ(r.profile.layers[0].grad_bytes, 0) << kind;
    EXPECT_EQ(r.profile.measured_only.other_kind, 2) << kind;
    EXPECT_EQ(r.profile.measured_only.first_field, "collective.op") << kind;
    EXPECT_THAT(r.warnings, Contains(HasSubstr("2 collective(s) are of kinds the S-SGD replay "
                                               "does not model (2 " + kind + ")")));
  }
}

// calibrate refused these ("recorded twice"); the replay counted them twice.
TEST_F(TraceCollectiveRules, ACollectiveRecordedTwiceIsALocatedError) {
  training(v1::Collective::ALL_REDUCE, 4096);
  events_.push_back(events_[5]);  // iteration 0's collective again, as record 18
  const InputError e = error();
  EXPECT_EQ(e.where().record, 18);
  EXPECT_EQ(e.where().field, "collective.sequence_number");
  EXPECT_THAT(e.reason(), HasSubstr("ALL_REDUCE sequence 0 of communicator 0x7, rank 0, is "
                                    "recorded twice (first at record 5)"));
}

TEST_F(TraceCollectiveRules, AnIterationNumberMarkedTwiceIsALocatedError) {
  marker("iteration/3", 1000, 2000);
  marker("forward/fc", 1100, 1200);
  kernel(1100, 1150);
  marker("iteration/3", 3000, 4000);
  const InputError e = error();
  EXPECT_EQ(e.where().record, 3);
  EXPECT_EQ(e.where().field, "marker.name");
  EXPECT_THAT(e.reason(), HasSubstr("'iteration/3' of rank 0 is marked again (first at record 0)"));
}

// start_ns 0 with an end on the Unix-epoch clock: a 57-year collective,
// which ended in a clock overflow blamed on the scenario's iterations.
TEST_F(TraceCollectiveRules, ACollectiveWithAMissingStartIsALocatedError) {
  training(v1::Collective::ALL_REDUCE, 4096);
  collective(v1::Collective::ALL_REDUCE, 9, 4096, 0, 1'800'000'000'000'000'000);
  const InputError e = error();
  EXPECT_EQ(e.where().record, 18);
  EXPECT_EQ(e.where().field, "collective.start_ns");
  EXPECT_THAT(e.reason(), HasSubstr("a start_ns of 0 is a missing timestamp"));
}

TEST_F(TraceCollectiveRules, AKernelLongerThanALayerMayBeIsALocatedError) {
  training(v1::Collective::ALL_REDUCE, 4096);
  kernel(5'000'000, 5'000'000 + (std::int64_t{1} << 43));
  const InputError e = error();
  EXPECT_EQ(e.where().record, 18);
  EXPECT_EQ(e.where().field, "kernel.end_ns");
  EXPECT_THAT(e.reason(), HasSubstr("more than one layer's time may be (2^42 ns, 73 minutes)"));
}

}  // namespace
}  // namespace ssgd::walk
