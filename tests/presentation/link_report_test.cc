// The links' traffic as the simulate and graph reports print it
// (presentation/report/link_report.h).
#include "presentation/report/link_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

namespace ssgd::report {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

sim::ReplayResult with_nic(double mean, double max) {
  sim::ReplayResult r;
  r.network_model = "analytical";
  r.link_kinds.push_back({"nic", 8, 1.5e10, mean, max});
  r.busiest_links.push_back({"node2/nic0 -> switch", "nic", 1.125e9, 1.9e9, max});
  return r;
}

std::string printed(const sim::ReplayResult& r) {
  std::ostringstream out;
  print_link_utilisation(r, out);
  return out.str();
}

TEST(LinkReport, PrintsEachKindAndTheBusiestLink) {
  const std::string text = printed(with_nic(0.624, 0.626));
  EXPECT_THAT(text, HasSubstr("link utilisation over the run (analytical model):"));
  EXPECT_THAT(text, HasSubstr("  nic             8       14.0 GiB    62.4%    62.6%"));
  EXPECT_THAT(text, HasSubstr("busiest: node2/nic0 -> switch (1.1 GB/s, 62.6%)"));
  EXPECT_THAT(text, Not(HasSubstr("above 100%")));
  EXPECT_EQ(links_json(with_nic(0.624, 0.626))["by_kind"][0]["max_utilisation"], 0.626);
}

// A figure above 100% never stands without its reason.
TEST(LinkReport, AboveAHundredPercentSaysWhy) {
  EXPECT_THAT(printed(with_nic(0.9, 1.35)),
              HasSubstr("above 100%: collectives that overlapped on a link, each timed alone"));
}

TEST(LinkReport, NothingWhenNoLinkCarriedTraffic) { EXPECT_EQ(printed(sim::ReplayResult{}), ""); }

}  // namespace
}  // namespace ssgd::report
