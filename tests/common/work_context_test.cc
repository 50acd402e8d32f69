// common/work_context.h: what a thread was doing when an exception (an
// out-of-memory one) left it, for ssgd's out-of-memory message.
#include "common/work_context.h"

#include <gtest/gtest.h>

#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace ssgd {
namespace {

// Clears what an earlier test's failure left (a context opened forgets it).
void forget_failures() { WorkContext clear("nothing"); }

TEST(WorkContext, NothingOpenSaysNothing) {
  forget_failures();
  EXPECT_EQ(work_context_now(), "");
  EXPECT_EQ(work_context_at_failure(), "");
}

TEST(WorkContext, DescribesActionFileWhatAndPositions) {
  forget_failures();
  WorkContext c("reading", "x.ssgdt", "ssgd trace", "chunk", "event");
  EXPECT_EQ(c.describe(), "reading 'x.ssgdt' (ssgd trace)");
  c.set_position(3);
  EXPECT_EQ(c.describe(), "reading 'x.ssgdt' (ssgd trace, chunk 3)");
  c.set_inner_position(1200);
  EXPECT_EQ(c.describe(), "reading 'x.ssgdt' (ssgd trace, chunk 3, event 1200)");
  EXPECT_EQ(work_context_now(), c.describe());

  // The outer file borrowed, with where its reader is.
  WorkContext bare("building the task graph");
  EXPECT_EQ(bare.describe(), "building the task graph of 'x.ssgdt' (ssgd trace, chunk 3, event 1200)");
  WorkContext counted("checking", "", nullptr, "layer");
  counted.set_position(0);
  EXPECT_EQ(counted.describe(), "checking of 'x.ssgdt' (layer 0, ssgd trace, chunk 3, event 1200)");
}

TEST(WorkContext, AContextWithoutAFileAnywhereIsItsAction) {
  forget_failures();
  WorkContext c("writing the report");
  EXPECT_EQ(c.describe(), "writing the report");
}

TEST(WorkContext, ALongPathIsCutAndItsLengthSaid) {
  forget_failures();
  const std::string path(20'000'000, 'p');
  WorkContext c("reading", path);
  const std::string d = c.describe();
  EXPECT_EQ(d, "reading '" + std::string(WorkContext::kMaxFileBytes, 'p') +
                   "... (20000000 bytes)'");
}

TEST(WorkContext, APathIsCutAtAWholeUtf8Character) {
  forget_failures();
  // 199 ASCII bytes then a 2-byte character straddling the 200-byte cut.
  const std::string path = std::string(199, 'a') + "\xC3\xA9" + "tail";
  WorkContext c("reading", path);
  EXPECT_EQ(c.describe(), "reading '" + std::string(199, 'a') + "... (205 bytes)'");
}

TEST(WorkContext, TheInnermostLeftByAnExceptionIsRememberedWithOuterFiles) {
  forget_failures();
  try {
    WorkContext outer("merging", "run", nullptr, "rank file");
    outer.set_position(3);
    WorkContext stage("reading the rank files");  // no file of its own: not repeated
    WorkContext inner("reading", "run/rank-3.ssgdt", "ssgd trace", "chunk", "event");
    inner.set_position(2);
    inner.set_inner_position(17);
    throw std::bad_alloc();
  } catch (const std::bad_alloc&) {
    EXPECT_EQ(work_context_at_failure(),
              "reading 'run/rank-3.ssgdt' (ssgd trace, chunk 2, event 17) for merging 'run' "
              "(rank file 3)");
  }
  // Still there after the handler, for main()'s message; nothing is open.
  EXPECT_EQ(work_context_now(), "");
  EXPECT_NE(work_context_at_failure(), "");
}

TEST(WorkContext, AStageWithoutAFileNamesTheInputItBorrowsAndOuterSameFilesAreNotRepeated) {
  forget_failures();
  try {
    WorkContext command("simulating", "x.ssgdt");
    WorkContext replay("replaying", "x.ssgdt");
    WorkContext stage("building the task graph");
    throw std::bad_alloc();
  } catch (const std::bad_alloc&) {
    EXPECT_EQ(work_context_at_failure(), "building the task graph of 'x.ssgdt'");
  }
}

TEST(WorkContext, AHandledFailureIsForgottenByTheNextContextOrTheEndOfItsOuterOne) {
  forget_failures();
  {
    WorkContext outer("loading", "in.csv");
    try {
      WorkContext inner("trying", "in.csv", "a format that is not it");
      throw std::runtime_error("not this format");
    } catch (const std::runtime_error&) {
    }
    // Handled: until something else happens, it is what was left.
    EXPECT_EQ(work_context_at_failure(), "trying 'in.csv' (a format that is not it)");
  }
  // The outer context closed normally: the handled failure is forgotten.
  EXPECT_EQ(work_context_at_failure(), "");

  try {
    WorkContext inner("first", "a");
    throw std::runtime_error("x");
  } catch (const std::runtime_error&) {
  }
  WorkContext next("second", "b");
  EXPECT_EQ(work_context_at_failure(), "second 'b'");
}

TEST(WorkContext, ContextsClosedOutOfOrderLeaveAConsistentStack) {
  forget_failures();
  auto a = std::make_optional<WorkContext>("a", "fa");
  auto b = std::make_optional<WorkContext>("b", "fb");
  auto c = std::make_optional<WorkContext>("c");
  a.reset();  // the outermost first
  EXPECT_EQ(work_context_now(), "c of 'fb'");
  b.reset();
  EXPECT_EQ(work_context_now(), "c");
  c.reset();
  EXPECT_EQ(work_context_now(), "");
}

TEST(WorkContext, AMovedContextKeepsItsPlaceAndPosition) {
  forget_failures();
  WorkContext outer("merging", "run");
  std::vector<WorkContext> readers;
  {
    WorkContext r("reading", "run/rank-0.ssgdt", "ssgd trace", "chunk");
    r.set_position(5);
    readers.push_back(std::move(r));
    EXPECT_EQ(r.describe(), "");  // moved from: closed
  }
  EXPECT_EQ(work_context_now(), "reading 'run/rank-0.ssgdt' (ssgd trace, chunk 5) for merging 'run'");
  WorkContext assigned;
  assigned = std::move(readers.back());
  readers.clear();
  EXPECT_EQ(work_context_now(), "reading 'run/rank-0.ssgdt' (ssgd trace, chunk 5) for merging 'run'");
  assigned = WorkContext("writing", "out.ssgdt");
  EXPECT_EQ(work_context_now(), "writing 'out.ssgdt' for merging 'run'");
}

TEST(WorkContext, EachThreadHasItsOwn) {
  forget_failures();
  WorkContext mine("simulating", "main.ssgdt");
  std::string seen_there;
  std::string failed_there;
  std::thread([&] {
    seen_there = work_context_now();
    try {
      WorkContext theirs("reading", "worker.csv", "layer CSV", "line");
      throw std::bad_alloc();
    } catch (const std::bad_alloc&) {
      failed_there = work_context_at_failure();
    }
  }).join();
  EXPECT_EQ(seen_there, "");
  EXPECT_EQ(failed_there, "reading 'worker.csv' (layer CSV)");
  EXPECT_EQ(work_context_at_failure(), "simulating 'main.ssgdt'");

  // A failure carried back from the worker is what this thread reports.
  try {
    carry_work_context_failure(failed_there);
    throw std::bad_alloc();
  } catch (const std::bad_alloc&) {
  }
  EXPECT_EQ(work_context_at_failure(), "reading 'worker.csv' (layer CSV)");
}

// Opens `depth` nested contexts, each on a file of its own, and fails in the innermost.
void nest(int depth, int at) {
  const std::string name = std::string(150, static_cast<char>('a' + at % 26)) + std::to_string(at);
  WorkContext c("reading", name);
  if (at + 1 == depth) throw std::bad_alloc();
  nest(depth, at + 1);
}

TEST(WorkContext, ThePhraseOfDeepNestingIsBounded) {
  forget_failures();
  try {
    nest(64, 0);
  } catch (const std::bad_alloc&) {
    const std::string d = work_context_at_failure();
    EXPECT_LT(d.size(), 1024u);
    EXPECT_TRUE(d.starts_with("reading '" + std::string(150, 'a' + 63 % 26) + "63' for reading '" +
                              std::string(150, 'a' + 62 % 26) + "62'"))
        << d;
  }
}

}  // namespace
}  // namespace ssgd
