#include "common/enum_names.h"

#include <gtest/gtest.h>

#include "common/collective_op.h"

namespace ssgd {
namespace {

enum class Fruit { kApple, kPear, kPlum };

constexpr EnumNames<Fruit, 2, 1> kFruitNames{
    {{{Fruit::kApple, "apple"}, {Fruit::kPear, "pear"}}}, {{{Fruit::kPear, "poire"}}}};

TEST(EnumNames, NamesParsesWithAliasesAndLists) {
  EXPECT_STREQ(kFruitNames.name(Fruit::kPear), "pear");
  EXPECT_STREQ(kFruitNames.name(Fruit::kPlum), "?");  // not in the table
  EXPECT_STREQ(kFruitNames.name(Fruit::kPlum, "unknown"), "unknown");
  EXPECT_EQ(kFruitNames.parse("apple"), Fruit::kApple);
  EXPECT_EQ(kFruitNames.parse("poire"), Fruit::kPear);  // an alias parses
  EXPECT_EQ(kFruitNames.parse("Apple"), std::nullopt);  // exactly, case and all
  EXPECT_EQ(kFruitNames.parse(""), std::nullopt);
  EXPECT_EQ(kFruitNames.list(), "apple, pear");          // aliases are not listed
  static_assert(kFruitNames.parse("pear") == Fruit::kPear);
}

// A table in use: every name parses back to its value.
TEST(EnumNames, CollectiveOpsRoundTrip) {
  for (const auto op : {CollectiveOp::kAllReduce, CollectiveOp::kReduceScatter,
                        CollectiveOp::kAllGather, CollectiveOp::kBroadcast,
                        CollectiveOp::kAllToAll, CollectiveOp::kReduce}) {
    EXPECT_EQ(parse_collective_op(to_string(op)), op) << to_string(op);
  }
  EXPECT_EQ(collective_op_names(),
            "all_reduce, reduce_scatter, all_gather, broadcast, all_to_all, reduce");
}

}  // namespace
}  // namespace ssgd
