#include "base/json_text.h"

#include <gtest/gtest.h>

namespace ferry {
namespace {

TEST(JsonTextTest, InvalidBytesAreReplacedNotThrown) {
  nlohmann::json j = {{"path", "ck\xff.pt"}, {"ok", "caf\xc3\xa9"}};
  EXPECT_THROW((void)j.dump(), nlohmann::json::type_error);
  std::string text = JsonText(j);
  EXPECT_EQ(text, "{\"ok\":\"caf\xc3\xa9\",\"path\":\"ck\xef\xbf\xbd.pt\"}");
  EXPECT_EQ(JsonText(nlohmann::json{{"a", 1}}, 2), "{\n  \"a\": 1\n}");
}

}  // namespace
}  // namespace ferry
