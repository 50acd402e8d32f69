// "Did you mean" (common/suggest.h): the nearest name when one is near, and
// nothing when none is.
#include "common/suggest.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace ssgd {
namespace {

const std::vector<std::string_view> kNames = {"simulate", "scale", "sweep", "ib_ndr400", "ib_hdr200"};

TEST(Suggest, EditDistance) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("scale", "scael"), 2u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("abc", ""), 3u);
}

TEST(Suggest, NearestName) {
  EXPECT_EQ(nearest_name("simulat", kNames), "simulate");
  EXPECT_EQ(nearest_name("sweep", kNames), "sweep");
  EXPECT_EQ(nearest_name("ib_ndr", kNames), "ib_ndr400");  // a name cut short
  EXPECT_EQ(nearest_name("ib_hdr", kNames), "ib_hdr200");
  EXPECT_FALSE(nearest_name("export", kNames).has_value());
  EXPECT_FALSE(nearest_name("ib_ndr800", kNames).has_value());  // another number
  EXPECT_FALSE(nearest_name("", kNames).has_value());
  EXPECT_FALSE(nearest_name(std::string(10'000, 's'), kNames).has_value());
  EXPECT_EQ(did_you_mean("scael", kNames), " (did you mean 'scale'?)");
  EXPECT_EQ(did_you_mean("nothing-like-it", kNames), "");
}

}  // namespace
}  // namespace ssgd
