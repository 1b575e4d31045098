// ByteSemaphore's leases (the copy engine's and the mount's memory budgets), ThreadPool.
#include "base/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
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

TEST(ByteSemaphoreTest, LeaseGivesUnitsBackWhenItEnds) {
  ByteSemaphore sem(100);
  {
    auto lease = sem.Acquire(60);
    EXPECT_EQ(lease.bytes(), 60u);
  }
  // All 100 are free again: this would block forever otherwise.
  auto all = sem.Acquire(100);
  EXPECT_EQ(sem.peak(), 100u);
}

TEST(ByteSemaphoreTest, MovedLeaseReleasesOnceAndReleaseIsIdempotent) {
  ByteSemaphore sem(100);
  auto a = sem.Acquire(70);
  ByteSemaphore::Lease b = std::move(a);
  EXPECT_EQ(a.bytes(), 0u);  // NOLINT(bugprone-use-after-move): moved-from holds nothing
  EXPECT_EQ(b.bytes(), 70u);
  b.Release();
  b.Release();
  a.Release();
  auto c = sem.Acquire(100);  // nothing is held twice or released twice
  EXPECT_EQ(c.bytes(), 100u);
}

TEST(ByteSemaphoreTest, AcquireWaitsForAnotherLeaseToEnd) {
  ByteSemaphore sem(100);
  auto held = sem.Acquire(80);
  std::atomic<bool> got{false};
  std::thread waiter([&] {
    auto lease = sem.Acquire(50);
    got = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(got.load());
  held.Release();
  waiter.join();
  EXPECT_TRUE(got.load());
}

TEST(ByteSemaphoreTest, RequestLargerThanCapacityIsGrantedWhenIdle) {
  ByteSemaphore sem(10);
  auto big = sem.Acquire(1000);
  EXPECT_EQ(big.bytes(), 1000u);
  EXPECT_EQ(sem.peak(), 1000u);
}

TEST(ThreadPoolTest, WaitIdleWaitsForEveryTask) {
  ThreadPool pool(3);
  std::atomic<int> done{0};
  for (int i = 0; i < 20; ++i) pool.Submit([&] { ++done; });
  pool.WaitIdle();
  EXPECT_EQ(done.load(), 20);
}

}  // namespace
}  // namespace ferry
