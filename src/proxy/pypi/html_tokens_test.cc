#include "proxy/pypi/html_tokens.h"

#include <gtest/gtest.h>

#include <cctype>
#include <map>
#include <vector>

namespace ferry::proxy::pypi {
namespace {

// A copy of what the callback saw (its views die with the callback).
struct Tag {
  std::string name;
  std::map<std::string, std::string> attributes;
  std::string text;
  const std::string* Find(const std::string& a) const {
    auto it = attributes.find(a);
    return it == attributes.end() ? nullptr : &it->second;
  }
};

std::vector<Tag> Scan(std::string_view html) {
  std::vector<Tag> tags;
  ScanHtmlTags(html, [&](const HtmlTag& t) {
    Tag copy{t.name, {}, std::string(t.text)};
    for (const auto& a : t.attributes) {
      std::string name(a.name);
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      EXPECT_EQ(*t.Find(name), a.value);
      copy.attributes.emplace(name, std::string(a.value));
    }
    tags.push_back(std::move(copy));
  });
  return tags;
}

TEST(HtmlTokensTest, ReadsAttributesInAnyQuotingAndOrder) {
  auto tags = Scan(R"(<A Data-X='1' HREF="a.whl" data-y=plain data-z>text</a>)");
  ASSERT_EQ(tags.size(), 1u);
  EXPECT_EQ(tags[0].name, "a");
  EXPECT_EQ(*tags[0].Find("href"), "a.whl");
  EXPECT_EQ(*tags[0].Find("data-x"), "1");
  EXPECT_EQ(*tags[0].Find("data-y"), "plain");
  EXPECT_EQ(*tags[0].Find("data-z"), "");
  EXPECT_EQ(tags[0].Find("data-w"), nullptr);
  EXPECT_EQ(tags[0].text, "text");
}

TEST(HtmlTokensTest, DecodesEntitiesInValuesAndText) {
  auto tags = Scan(R"(<a data-r="&gt;=3.7,&lt;3.11&#44;&#x21;&quot;&amp;">a &amp; b&#39;</a>)");
  ASSERT_EQ(tags.size(), 1u);
  EXPECT_EQ(*tags[0].Find("data-r"), ">=3.7,<3.11,!\"&");
  EXPECT_EQ(tags[0].text, "a & b'");
}

TEST(HtmlTokensTest, EntityEdgeCases) {
  EXPECT_EQ(DecodeHtmlEntities("&amp"), "&");                 // legacy, no ';'
  EXPECT_EQ(DecodeHtmlEntities("?a=1&ltb=2"), "?a=1&ltb=2");  // before an alphanumeric: kept
  EXPECT_EQ(DecodeHtmlEntities("&unknown;"), "&unknown;");
  EXPECT_EQ(DecodeHtmlEntities("&#0;"), "\xEF\xBF\xBD");
  EXPECT_EQ(DecodeHtmlEntities("&#x110000;"), "\xEF\xBF\xBD");
  EXPECT_EQ(DecodeHtmlEntities("&#99999999999999999999;"), "\xEF\xBF\xBD");
  EXPECT_EQ(DecodeHtmlEntities("&#xE9;"), "\xC3\xA9");
  EXPECT_EQ(DecodeHtmlEntities("&#"), "&#");
  EXPECT_EQ(DecodeHtmlEntities("&"), "&");
}

TEST(HtmlTokensTest, SkipsCommentsScriptsAndEndTags) {
  auto tags = Scan(
      "<!DOCTYPE html><!-- <a href=x> --><script>'<a href=y>'</script>"
      "<STYLE>a{}</style></p><a href=z>z</a>");
  ASSERT_EQ(tags.size(), 3u);  // script, style, a
  EXPECT_EQ(tags[0].name, "script");
  EXPECT_EQ(tags[1].name, "style");
  EXPECT_EQ(*tags[2].Find("href"), "z");
}

TEST(HtmlTokensTest, FirstDuplicateAttributeWins) {
  auto tags = Scan(R"(<a href="first" href="second">)");
  ASSERT_EQ(tags.size(), 1u);
  EXPECT_EQ(*tags[0].Find("href"), "first");
}

TEST(HtmlTokensTest, UnterminatedTagIsDropped) {
  EXPECT_EQ(Scan(R"(<a href="x.whl">ok</a><a href="never-closed)").size(), 1u);
  EXPECT_EQ(Scan("<a href=x").size(), 0u);
  EXPECT_EQ(Scan("<!-- never closed <a href=x>").size(), 0u);
  EXPECT_EQ(Scan("1 < 2 <a href=x>").size(), 1u);
}

TEST(HtmlTokensTest, EscapeCoversAttributeBreakers) {
  EXPECT_EQ(HtmlEscape(R"(<a href="x" onclick='y'>&)"),
            "&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;");
}

}  // namespace
}  // namespace ferry::proxy::pypi
