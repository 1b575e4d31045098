#include "base/status.h"

#include <gtest/gtest.h>

namespace ferry {
namespace {

Result<int> Half(int x) {
  if (x % 2) return InvalidArgument("odd");
  return x / 2;
}

Result<int> Quarter(int x) {
  FERRY_ASSIGN_OR_RETURN(int h, Half(x));
  FERRY_ASSIGN_OR_RETURN(int q, Half(h));
  return q;
}

TEST(StatusTest, ResultPropagatesErrors) {
  EXPECT_EQ(*Quarter(8), 2);
  auto r = Quarter(6);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
}

TEST(StatusTest, ContextIsPrepended) {
  Status s = NotFound("no such key").WithContext("GetObject 's3://b/k'");
  EXPECT_EQ(s.message(), "GetObject 's3://b/k': no such key");
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
}

TEST(StatusTest, OnlyTransientCodesAreRetryable) {
  EXPECT_TRUE(IsRetryable(Unavailable("reset")));
  EXPECT_TRUE(IsRetryable(Status(StatusCode::kDeadlineExceeded, "t")));
  EXPECT_FALSE(IsRetryable(NotFound("x")));
  EXPECT_FALSE(IsRetryable(Status(StatusCode::kResourceExhausted, "disk full")));
  EXPECT_FALSE(IsRetryable(Status()));
}

}  // namespace
}  // namespace ferry
