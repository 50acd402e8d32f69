// The tracing window (tracer/core/trace_window.h) on the CPU: its settings,
// and the steps it opens and closes at for each kind, with a mock switch in
// place of CUPTI and the markers it writes collected.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tracer/core/trace_window.h"

namespace ssgd::tracer {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

WindowSettings settings_of(const char* value) {
  return read_window_settings([value](const char* name) -> std::optional<std::string> {
    if (std::string(name) == "SSGD_TRACER_WINDOW" && value != nullptr) return std::string(value);
    return std::nullopt;
  });
}

TEST(WindowSettings, Forms) {
  EXPECT_EQ(settings_of(nullptr).kind, WindowSettings::Kind::kNone);
  EXPECT_EQ(settings_of("").kind, WindowSettings::Kind::kNone);
  const WindowSettings steps = settings_of("steps:10:20");
  EXPECT_EQ(steps.kind, WindowSettings::Kind::kSteps);
  EXPECT_EQ(steps.first, 10);
  EXPECT_EQ(steps.last, 20);
  const WindowSettings time = settings_of("time:1.5:3");
  EXPECT_EQ(time.kind, WindowSettings::Kind::kTime);
  EXPECT_EQ(time.first, 1'500'000'000);
  EXPECT_EQ(time.last, 3'000'000'000);
  EXPECT_EQ(settings_of("signal").kind, WindowSettings::Kind::kSignal);
}

TEST(WindowSettings, MalformedMeansNoWindowAndSaysWhy) {
  for (const char* bad : {"steps:5:5", "steps:-1:3", "steps:a:3", "time:3:1", "time:x:2",
                          "steps:1", "often", "steps:1:2:3"}) {
    SCOPED_TRACE(bad);
    const WindowSettings s = settings_of(bad);
    EXPECT_EQ(s.kind, WindowSettings::Kind::kNone);
    ASSERT_EQ(s.problems.size(), 1u);
    EXPECT_THAT(s.problems[0], HasSubstr("SSGD_TRACER_WINDOW='"));
    EXPECT_THAT(s.problems[0], HasSubstr("every step is traced"));
  }
}

struct Switch final : WindowControl {
  std::vector<bool> calls;
  void set_recording(bool on) noexcept override { calls.push_back(on); }
};

// A window over a mock switch; the markers it writes, as "name@start-end".
struct Harness {
  Switch control;
  std::vector<std::string> marks;
  TraceWindow window;
  explicit Harness(const char* setting, std::int64_t session_start = 0)
      : window(settings_of(setting), session_start, [this](const ActivityRecord& r) {
          const auto& m = std::get<MarkerActivity>(r.payload);
          EXPECT_EQ(m.domain.view(), kWindowDomain);
          marks.push_back(std::string(r.name) + "@" + std::to_string(m.start_ns) + "-" +
                          std::to_string(m.end_ns));
        }) {}
  // Steps first..last, each 100 ns long starting at 1000 n.
  void run(std::int64_t first, std::int64_t last) {
    for (std::int64_t n = first; n <= last; ++n) {
      window.step(n, false, 1000 * n);
      window.step(n, true, 1000 * n + 100);
    }
  }
};

TEST(TraceWindow, StepsWindowTracesItsStepsWholeAndMarksEveryStep) {
  Harness h("steps:2:4");
  h.window.set_control(&h.control);  // starts closed
  EXPECT_FALSE(h.window.recording());
  h.run(0, 5);
  EXPECT_THAT(h.control.calls, ElementsAre(false, true, false));
  EXPECT_EQ(h.window.steps_seen(), 6);
  EXPECT_EQ(h.window.steps_traced(), 2);
  EXPECT_THAT(h.marks, ElementsAre("step/0@0-100", "step/1@1000-1100", "window/open@2000-2000",
                                   "step/2@2000-2100", "step/3@3000-3100",
                                   "window/close@3100-3100", "step/4@4000-4100",
                                   "step/5@5000-5100"));
}

TEST(TraceWindow, AWindowAlreadyPassedNeverOpens) {
  Harness h("steps:2:4");
  h.window.set_control(&h.control);
  h.run(7, 9);  // a program that numbers its steps from 7
  EXPECT_THAT(h.control.calls, ElementsAre(false));
  EXPECT_EQ(h.window.steps_traced(), 0);
}

TEST(TraceWindow, TimeWindowOpensAtTheFirstStepAfterItsStart) {
  Harness h("time:0.0000025:0.0000040", /*session_start=*/0);  // 2500 ns to 4000 ns
  h.window.set_control(&h.control);
  h.run(0, 6);
  // Step 3 starts at 3000 (after 2500): opens; step 4 ends at 4100 (after 4000): closes.
  EXPECT_EQ(h.window.steps_traced(), 2);
  EXPECT_THAT(h.control.calls, ElementsAre(false, true, false));
}

TEST(TraceWindow, SignalOpensAtTheNextStepAndTheNextSignalClosesIt) {
  Harness h("signal");
  h.window.set_control(&h.control);
  h.run(0, 1);
  h.window.signal();
  h.run(2, 4);  // opens at 2
  h.window.signal();
  h.run(5, 6);  // closes at the end of 5
  EXPECT_EQ(h.window.steps_traced(), 4);
  EXPECT_THAT(h.control.calls, ElementsAre(false, true, false));
}

TEST(TraceWindow, WithoutASwitchNothingOpensButStepsAreMarked) {
  Harness h("steps:0:10");
  h.run(0, 2);
  EXPECT_EQ(h.window.steps_traced(), 0);
  EXPECT_EQ(h.marks.size(), 3u);
}

TEST(TraceWindow, NoWindowMarksNothingAndStrayEndsAreIgnored) {
  Harness none(nullptr);
  none.window.set_control(&none.control);
  none.run(0, 3);
  EXPECT_TRUE(none.control.calls.empty());
  EXPECT_TRUE(none.marks.empty());
  Harness h("steps:0:1");
  h.window.set_control(&h.control);
  h.window.step(5, true, 100);  // an end without its start
  EXPECT_TRUE(h.marks.empty());
}

}  // namespace
}  // namespace ssgd::tracer
