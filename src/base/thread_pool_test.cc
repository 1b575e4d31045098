// ByteSemaphore's non-blocking leases (the mount's memory budget).
#include "base/thread_pool.h"

#include <gtest/gtest.h>

#include <utility>

namespace ferry {
namespace {

TEST(ByteSemaphoreTest, TryAcquireTakesOnlyWhatFitsNow) {
  ByteSemaphore sem(100);
  auto a = sem.TryAcquire(70);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->bytes(), 70u);
  EXPECT_FALSE(sem.TryAcquire(31).has_value());  // refused at once, not waited for
  EXPECT_EQ(sem.used(), 70u);
  EXPECT_TRUE(sem.TryAcquire(30).has_value());  // fits (and ends right away)
  a->Release();
  // Unlike Acquire, never more than the capacity, even with nothing held.
  EXPECT_FALSE(sem.TryAcquire(101).has_value());
  EXPECT_TRUE(sem.TryAcquire(0).has_value());
  EXPECT_EQ(sem.used(), 0u);
  EXPECT_EQ(sem.peak(), 100u);
}

TEST(ByteSemaphoreTest, ATriedLeaseGivesItsUnitsBackOnceWhereverItEnds) {
  ByteSemaphore sem(100);
  std::optional<ByteSemaphore::Lease> a = sem.TryAcquire(30);
  ByteSemaphore::Lease b = std::move(*a);
  EXPECT_EQ(a->bytes(), 0u);  // NOLINT(bugprone-use-after-move): moved-from holds nothing
  EXPECT_EQ(sem.used(), 30u);
  ByteSemaphore::Lease c = *sem.TryAcquire(20);
  c = std::move(b);  // c's 20 go back; b's 30 are c's now
  EXPECT_EQ(sem.used(), 30u);
  c.Release();
  c.Release();
  a.reset();
  EXPECT_EQ(sem.used(), 0u);
}

}  // namespace
}  // namespace ferry
