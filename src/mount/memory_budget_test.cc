#include "mount/memory_budget.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace ferry::mount {
namespace {

TEST(MemoryBudgetTest, GrantsWhatFitsAndRefusesTheRestWithoutWaiting) {
  MemoryBudget budget(10);
  std::vector<MemoryBudget::Lease> held;
  for (int i = 0; i < 3; ++i) {
    auto lease = budget.TryTake(3);
    ASSERT_TRUE(lease.has_value());
    held.push_back(std::move(*lease));
  }
  EXPECT_FALSE(budget.TryTake(2).has_value());  // 9 + 2 > 10: refused, the caller reads on demand
  EXPECT_TRUE(budget.TryTake(1).has_value());
  EXPECT_EQ(budget.used(), 9u);
  held.clear();
  EXPECT_EQ(budget.used(), 0u);
}

TEST(MemoryBudgetTest, NeverGrantsMoreThanTheCapacity) {
  MemoryBudget budget(10);
  EXPECT_FALSE(budget.TryTake(11).has_value());  // even with nothing held
  MemoryBudget none(0);                          // --max-memory 0: no read-ahead at all
  EXPECT_FALSE(none.TryTake(1).has_value());
}

}  // namespace
}  // namespace ferry::mount
