#include "mount/memory_budget.h"

#include <gtest/gtest.h>

#include <vector>

namespace ferry::mount {
namespace {

TEST(MemoryBudgetTest, GrantsWhatFitsAndRefusesTheRestWithoutWaiting) {
  MemoryBudget budget(10);
  std::vector<MemoryBudget::Lease> held;
  for (int i = 0; i < 3; ++i) {
    held.push_back(budget.TryTake(3));
    EXPECT_TRUE(held.back());
  }
  EXPECT_FALSE(budget.TryTake(2));  // 9 + 2 > 10: refused, the caller reads on demand
  EXPECT_TRUE(budget.TryTake(1));
  EXPECT_EQ(budget.used(), 9u);
  held.clear();
  EXPECT_EQ(budget.used(), 0u);
}

TEST(MemoryBudgetTest, NeverGrantsMoreThanTheCapacity) {
  MemoryBudget budget(10);
  EXPECT_FALSE(budget.TryTake(11));  // even with nothing held
  MemoryBudget none(0);              // --max-memory 0: no read-ahead at all
  EXPECT_FALSE(none.TryTake(1));
}

}  // namespace
}  // namespace ferry::mount
