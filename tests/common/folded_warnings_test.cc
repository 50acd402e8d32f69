// FoldedWarnings (common/logging.h): warnings alike are printed once with a
// count, in order of first appearance; other levels pass through.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "common/logging.h"
#include "common/run_indexed.h"

namespace ssgd {
namespace {

TEST(FoldedWarnings, KindDropsOneWordPrefixesParenthesesAndDigits) {
  EXPECT_EQ(FoldedWarnings::kind_of("cnn-w1: a/b/trace.ssgdt: 4 marks name no layer; ignored"),
            FoldedWarnings::kind_of("mlp-w2: c/trace.ssgdt: 16 marks name no layer; ignored"));
  EXPECT_EQ(FoldedWarnings::kind_of("policy ddp merges: modelled (analytical, 2 workers)"),
            FoldedWarnings::kind_of("policy ddp merges: modelled (flow, 4 workers)"));
  EXPECT_NE(FoldedWarnings::kind_of("policy ddp merges: modelled"),
            FoldedWarnings::kind_of("policy single merges: modelled"));
}

TEST(FoldedWarnings, EachKindOnceWithACount) {
  testing::internal::CaptureStderr();
  {
    FoldedWarnings folded({"fold-test"});
    auto log = logger("fold-test");
    log->warn("case1: x.ssgdt: 3 marks ignored");
    log->warn("case2: y.ssgdt: 5 marks ignored");
    log->warn("something else");
    log->warn("case3: z.ssgdt: 7 marks ignored");
  }
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(err,
            "warning [fold-test] case1: x.ssgdt: 3 marks ignored (and 2 more like it)\n"
            "warning [fold-test] something else\n");
  // Afterwards the logger prints as before.
  testing::internal::CaptureStderr();
  logger("fold-test")->warn("alone");
  EXPECT_NE(testing::internal::GetCapturedStderr().find("alone"), std::string::npos);
}

// Items run on several threads say their warnings in whatever order the
// threads reach them; folded, they read as one thread would have said them:
// the lowest item's message in full, kinds in item order.
TEST(FoldedWarnings, ItemsOnThreadsFoldInItemOrder) {
  const auto run = [](std::size_t jobs) {
    testing::internal::CaptureStderr();
    {
      FoldedWarnings folded({"fold-test"});
      run_indexed(6, jobs, [](std::size_t i) {
        // Later items first: item 0 waits longest.
        std::this_thread::sleep_for(std::chrono::milliseconds(10 * (6 - static_cast<int>(i))));
        auto log = logger("fold-test");
        log->warn("case{}: {} marks ignored", i, i);
        if (i % 2 == 1) log->warn("odd case{}: kept apart", i);
      });
    }
    return testing::internal::GetCapturedStderr();
  };
  const std::string one = run(1);
  EXPECT_EQ(one,
            "warning [fold-test] case0: 0 marks ignored (and 5 more like it)\n"
            "warning [fold-test] odd case1: kept apart (and 2 more like it)\n");
  EXPECT_EQ(run(6), one);
}

}  // namespace
}  // namespace ssgd
