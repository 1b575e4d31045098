#include "proxy/pypi/json_reader.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace ferry::proxy::pypi {
namespace {

// Converts to nlohmann's DOM to compare with its parser (the reference).
nlohmann::json ToNlohmann(const JsonValue& v) {
  switch (v.type) {
    case JsonValue::Type::kNull:
      return nullptr;
    case JsonValue::Type::kBool:
      return v.boolean;
    case JsonValue::Type::kNumber:
      return nlohmann::json::parse(v.text);
    case JsonValue::Type::kString:
      return std::string(v.text);
    case JsonValue::Type::kArray: {
      nlohmann::json a = nlohmann::json::array();
      for (const auto& item : v.children) a.push_back(ToNlohmann(item.value));
      return a;
    }
    case JsonValue::Type::kObject: {
      nlohmann::json o = nlohmann::json::object();
      for (const auto& m : v.children) o[std::string(m.key)] = ToNlohmann(m.value);
      return o;
    }
  }
  return nullptr;
}

TEST(JsonReaderTest, AgreesWithNlohmannOnValidDocuments) {
  for (const char* text : {
           R"({})",
           R"([])",
           R"("x")",
           R"(0)",
           R"(-1.5e+3)",
           R"(true)",
           R"(null)",
           R"({"a":[1,2,{"b":null}],"c":"d\"e\\f\/g\b\f\n\r\t","e":false})",
           R"( { "k" : "\u00e9\u4e2d\ud83d\ude00" , "n" : 18446744073709551615 } )",
           R"({"dup":1,"dup":2})",
       }) {
    JsonDocument doc;
    ASSERT_TRUE(ParseJson(text, 64, doc).ok()) << text;
    EXPECT_EQ(ToNlohmann(doc.root), nlohmann::json::parse(text)) << text;
  }
}

TEST(JsonReaderTest, RefusesMalformedDocuments) {
  for (const char* text :
       {"", "{", "[1,]", "{\"a\":}", "{\"a\" 1}", "{a:1}", "01", "1.", "-", "tru", "\"abc",
        "\"\\x\"", "\"\\u12\"", "\"a\nb\"", "[1] [2]", "{\"a\":1,}", "nul"}) {
    JsonDocument doc;
    EXPECT_EQ(ParseJson(text, 64, doc).code(), StatusCode::kInvalidArgument) << text;
  }
}

TEST(JsonReaderTest, LimitsDepth) {
  JsonDocument doc;
  EXPECT_TRUE(ParseJson(std::string(64, '[') + std::string(64, ']'), 64, doc).ok());
  EXPECT_FALSE(ParseJson(std::string(65, '[') + std::string(65, ']'), 64, doc).ok());
  EXPECT_FALSE(ParseJson(std::string(1000000, '['), 64, doc).ok());
}

TEST(JsonReaderTest, LoneSurrogatesBecomeReplacementCharacters) {
  JsonDocument doc;
  ASSERT_TRUE(ParseJson(R"(["\ud800x","\udc00","\ud800\u0041"])", 64, doc).ok());
  EXPECT_EQ(doc.root.children[0].value.text, "\xEF\xBF\xBDx");
  EXPECT_EQ(doc.root.children[1].value.text, "\xEF\xBF\xBD");
  EXPECT_EQ(doc.root.children[2].value.text,
            "\xEF\xBF\xBD"
            "A");
}

TEST(JsonReaderTest, FindAndIntegers) {
  JsonDocument doc;
  ASSERT_TRUE(ParseJson(R"({"a":1,"b":-1,"c":1.5,"d":99999999999999999999,"a":7})", 64, doc).ok());
  EXPECT_EQ(*doc.root.Find("a")->AsUint64(), 7u);
  EXPECT_FALSE(doc.root.Find("b")->AsUint64());
  EXPECT_FALSE(doc.root.Find("c")->AsUint64());
  EXPECT_FALSE(doc.root.Find("d")->AsUint64());
  EXPECT_EQ(doc.root.Find("zz"), nullptr);
  EXPECT_EQ(doc.root.Find("a")->Find("x"), nullptr);  // not an object
}

}  // namespace
}  // namespace ferry::proxy::pypi
