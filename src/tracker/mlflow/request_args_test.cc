#include "tracker/mlflow/request_args.h"

#include <gtest/gtest.h>

#include <string>

namespace ferry::tracker::mlflow {
namespace {

TEST(JsonDepthExceedsTest, CountsNestingOutsideStringsOnly) {
  EXPECT_FALSE(JsonDepthExceeds(R"({"a": [1, {"b": [2]}]})", 4));
  EXPECT_TRUE(JsonDepthExceeds(R"({"a": [1, {"b": [[2]]}]})", 4));
  // Brackets in strings, also after escaped quotes and backslashes, are text.
  EXPECT_FALSE(JsonDepthExceeds(R"({"k": "[[[[{{{{", "q": "\"[[[[", "b": "\\"})", 1));
  EXPECT_TRUE(JsonDepthExceeds(R"({"b": "\\", "x": [[1]]})", 2));
  EXPECT_FALSE(JsonDepthExceeds("", 0));
  // Siblings do not add up: depth returns after each closing bracket.
  std::string flat = "[";
  for (int i = 0; i < 1000; ++i) flat += "[],";
  flat += "[]]";
  EXPECT_FALSE(JsonDepthExceeds(flat, 2));
  EXPECT_TRUE(JsonDepthExceeds(std::string(33, '['), 32));
}

}  // namespace
}  // namespace ferry::tracker::mlflow
