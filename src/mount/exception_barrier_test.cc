#include "mount/exception_barrier.h"

#include <gtest/gtest.h>

#include <new>
#include <stdexcept>

namespace ferry::mount {
namespace {

TEST(ExceptionBarrierTest, ReportsWhetherTheBodyReturned) {
  int runs = 0;
  EXPECT_TRUE(RunCatchingAll("lookup", [&] { ++runs; }));
  EXPECT_EQ(runs, 1);
}

TEST(ExceptionBarrierTest, NoExceptionGetsThrough) {
  EXPECT_FALSE(RunCatchingAll("read", [] { throw std::out_of_range("inode 7"); }));
  EXPECT_FALSE(RunCatchingAll("write", [] { throw std::bad_alloc(); }));
  EXPECT_FALSE(RunCatchingAll("open", [] { throw 42; }));  // not a std::exception
}

}  // namespace
}  // namespace ferry::mount
