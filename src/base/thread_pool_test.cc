// ByteSemaphore and its leases (the pool itself is exercised by every module that uses it).
#include "base/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <utility>

namespace ferry {
namespace {

TEST(ByteSemaphoreTest, ALeaseGivesItsBytesBackWhenItEnds) {
  ByteSemaphore sem(100);
  {
    ByteSemaphore::Lease lease = sem.AcquireLease(60);
    EXPECT_TRUE(lease);
    EXPECT_EQ(lease.bytes(), 60u);
    EXPECT_EQ(sem.used(), 60u);
  }
  EXPECT_EQ(sem.used(), 0u);
  EXPECT_EQ(sem.peak(), 60u);
}

TEST(ByteSemaphoreTest, AMovedLeaseGivesItsBytesBackOnce) {
  ByteSemaphore sem(100);
  ByteSemaphore::Lease a = sem.AcquireLease(30);
  ByteSemaphore::Lease b = std::move(a);
  EXPECT_FALSE(a);  // NOLINT(bugprone-use-after-move): moved-from leases are empty
  EXPECT_EQ(sem.used(), 30u);
  ByteSemaphore::Lease c = sem.AcquireLease(20);
  c = std::move(b);  // c's 20 go back; b's 30 are c's now
  EXPECT_EQ(sem.used(), 30u);
  c.Reset();
  EXPECT_EQ(sem.used(), 0u);
  c.Reset();
  EXPECT_EQ(sem.used(), 0u);
}

TEST(ByteSemaphoreTest, TryAcquireLeaseTakesOnlyWhatFitsNow) {
  ByteSemaphore sem(100);
  ByteSemaphore::Lease a = sem.TryAcquireLease(70);
  EXPECT_TRUE(a);
  EXPECT_FALSE(sem.TryAcquireLease(31));  // refused at once, not waited for
  EXPECT_EQ(sem.used(), 70u);
  EXPECT_TRUE(sem.TryAcquireLease(30));  // fits (and ends right away)
  a.Reset();
  // Unlike Acquire, never more than the capacity, even with nothing held.
  EXPECT_FALSE(sem.TryAcquireLease(101));
  EXPECT_TRUE(sem.TryAcquireLease(0));
  EXPECT_EQ(sem.used(), 0u);
}

TEST(ByteSemaphoreTest, AcquireLeaseWaitsUntilAnotherLeaseEnds) {
  ByteSemaphore sem(100);
  ByteSemaphore::Lease first = sem.AcquireLease(80);
  std::atomic<bool> acquired = false;
  std::thread waiter([&] {
    ByteSemaphore::Lease second = sem.AcquireLease(50);
    acquired = true;
  });
  EXPECT_FALSE(acquired);  // 80 + 50 do not fit while `first` is held
  first.Reset();
  waiter.join();
  EXPECT_TRUE(acquired);
  EXPECT_EQ(sem.used(), 0u);
}

}  // namespace
}  // namespace ferry
