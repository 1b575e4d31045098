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

}  // namespace
}  // namespace ferry::server
