// FoldedWarnings (common/logging.h): warnings alike are printed once with a
// count, in order of first appearance; other levels pass through.
#include <gtest/gtest.h>

#include <string>

#include "common/logging.h"

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

}  // namespace
}  // namespace ssgd
