#include "server/auth.h"

#include <gtest/gtest.h>

namespace ferry::server {
namespace {

TEST(CheckBearerTest, AcceptsAnyConfiguredToken) {
  std::vector<std::string> tokens{"alpha", "beta-123"};
  EXPECT_EQ(CheckBearer("Bearer alpha", tokens), AuthResult::kOk);
  EXPECT_EQ(CheckBearer("bearer beta-123", tokens), AuthResult::kOk);
  EXPECT_EQ(CheckBearer("", tokens), AuthResult::kMissing);
  EXPECT_EQ(CheckBearer("Bearer alph", tokens), AuthResult::kInvalid);
  EXPECT_EQ(CheckBearer("Bearer alphaX", tokens), AuthResult::kInvalid);
  EXPECT_EQ(CheckBearer("Basic YWxwaGE6", tokens), AuthResult::kInvalid);
  EXPECT_EQ(CheckBearer("Bearer ", tokens), AuthResult::kInvalid);
}

TEST(CheckBearerTest, ReadTokensAreReadOnly) {
  std::vector<std::string> rw{"writer"};
  std::vector<std::string> ro{"reader", "both"};
  EXPECT_EQ(CheckBearer("Bearer writer", rw, ro), AuthResult::kOk);
  EXPECT_EQ(CheckBearer("Bearer reader", rw, ro), AuthResult::kReadOnly);
  EXPECT_EQ(CheckBearer("Bearer readerX", rw, ro), AuthResult::kInvalid);
  EXPECT_EQ(CheckBearer("", rw, ro), AuthResult::kMissing);
  // Read tokens alone (a read-only server).
  EXPECT_EQ(CheckBearer("Bearer reader", {}, ro), AuthResult::kReadOnly);
  EXPECT_EQ(CheckBearer("Bearer writer", {}, ro), AuthResult::kInvalid);
}

TEST(ConstantTimeEqualsTest, ComparesLengthAndBytes) {
  EXPECT_TRUE(ConstantTimeEquals("abc", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abd"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "ab"));
  EXPECT_FALSE(ConstantTimeEquals("", "a"));
  EXPECT_TRUE(ConstantTimeEquals("", ""));
}

TEST(TokenFromCookieTest, FindsThePercentEncodedTokenAmongCookies) {
  EXPECT_EQ(TokenFromCookie("ferry_token=abc"), "abc");
  EXPECT_EQ(TokenFromCookie("a=1; ferry_token=a%2Bb%3D%3D; b=2"), "a+b==");
  EXPECT_EQ(TokenFromCookie(" theme=dark ;ferry_token= tok ;"), "tok");
  EXPECT_EQ(TokenFromCookie("xferry_token=abc; ferry_tokens=x"), std::nullopt);
  EXPECT_EQ(TokenFromCookie("ferry_token="), std::nullopt);
  EXPECT_EQ(TokenFromCookie("ferry_token=%zz"), std::nullopt);
  EXPECT_EQ(TokenFromCookie(""), std::nullopt);
}

Request WithHeader(std::string method, std::string name, std::string value) {
  Request r;
  r.method = std::move(method);
  r.path = "/ajax-api/2.0/mlflow/runs/search";
  if (!name.empty()) r.headers.Add(std::move(name), std::move(value));
  return r;
}

TEST(CheckAccessTest, TheUiCookieReadsButNeverWrites) {
  const std::vector<std::string> rw = {"writer"}, ro = {"reader"};
  EXPECT_FALSE(
      CheckAccess(WithHeader("POST", "Cookie", "ferry_token=writer"), Access::kRead, rw, ro));
  EXPECT_FALSE(
      CheckAccess(WithHeader("GET", "Cookie", "ferry_token=reader"), Access::kRead, rw, ro));
  auto denied =
      CheckAccess(WithHeader("POST", "Cookie", "ferry_token=writer"), Access::kWrite, rw, ro);
  ASSERT_TRUE(denied);
  EXPECT_EQ(denied->status, 403);
  EXPECT_EQ(denied->body.find("writer"), std::string::npos);  // never echoes a token
  // The header wins over the cookie and may write.
  Request both = WithHeader("POST", "Authorization", "Bearer writer");
  both.headers.Add("Cookie", "ferry_token=reader");
  EXPECT_FALSE(CheckAccess(both, Access::kWrite, rw, ro));
  auto bad = CheckAccess(WithHeader("GET", "Cookie", "ferry_token=nope"), Access::kRead, rw, ro);
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 401);
  auto none = CheckAccess(WithHeader("GET", "", ""), Access::kRead, rw, ro);
  ASSERT_TRUE(none);
  EXPECT_EQ(none->status, 401);
  EXPECT_EQ(none->headers.Get("WWW-Authenticate"), "Bearer realm=\"ferry\"");
}

}  // namespace
}  // namespace ferry::server
