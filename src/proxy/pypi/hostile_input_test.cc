// Upstream pages are untrusted input: a hostile or broken index must not make the proxy serve
// a script, a link off the proxy, a path outside the files tree, or invalid output, nor take
// more than linear time.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "proxy/pypi/html_tokens.h"
#include "proxy/pypi/proxy_urls.h"
#include "proxy/pypi/simple_html.h"
#include "proxy/pypi/simple_json.h"
#include "proxy/pypi/test_util.h"

namespace ferry::proxy::pypi {
namespace {

constexpr const char* kEvilUrl = "https://pypi.org/simple/evil/";

TEST(HostileInputTest, ScriptsInAttributesAreEscapedOnOutput) {
  auto page = ParseProjectHtml(
      R"x(<a href="https://h/evil-1.0.tar.gz#sha256=)x" + testing::Hex64('a') +
          R"x(" data-requires-python="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;" )x"
          R"x(data-yanked="x' onmouseover='alert(1)">evil</a>)x",
      kEvilUrl, "evil");
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->files.size(), 1u);
  EXPECT_EQ(*page->files[0].requires_python, "\"><script>alert(1)</script>");
  std::string html = RenderProjectHtml(RewriteForProxy(*page, "/pypi/files/", "evil"));
  EXPECT_EQ(html.find("<script>"), std::string::npos);
  EXPECT_EQ(html.find("' onmouseover"), std::string::npos);
  EXPECT_NE(html.find("&quot;&gt;&lt;script&gt;"), std::string::npos);
  // And it comes back as the same text.
  auto again = ParseProjectHtml(html, "http://nas/pypi/simple/evil/", "evil");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->files[0].requires_python, page->files[0].requires_python);
  EXPECT_EQ(again->files[0].yanked, page->files[0].yanked);
}

TEST(HostileInputTest, NonHttpLinksAndUnsafeNamesAreSkipped) {
  auto page = ParseProjectHtml(
      "<a href=\"javascript:alert(1)//x.whl\">x.whl</a>"
      "<a href=\" JAVASCRIPT:alert(1)\">y</a>"
      "<a href=\"data:text/html;base64,PHNjcmlwdD4=\">z</a>"
      "<a href=\"file:///etc/passwd\">passwd</a>"
      "<a href=\"https://h/a/%2E%2E\">..</a>"
      "<a href=\"https://h/a/..%2F..%2Fetc%2Fpasswd\">p</a>"
      "<a href=\"https://h/a/x%00.whl\">nul</a>"
      "<a>no href</a>"
      "<a href=\"https://h/ok-1.0.tar.gz\">ok-1.0.tar.gz</a>",
      kEvilUrl, "evil");
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->files.size(), 1u);
  EXPECT_EQ(page->files[0].filename, "ok-1.0.tar.gz");
  EXPECT_EQ(page->skipped.size(), 8u);
  // "https://h/a/../x.whl" is a plain URL after dot-segment removal: fine, and named x.whl.
  auto dots = ParseProjectHtml("<a href=\"https://h/a/../x.whl\">x</a>", kEvilUrl, "evil");
  ASSERT_EQ(dots->files.size(), 1u);
  EXPECT_EQ(dots->files[0].url, "https://h/x.whl");

  auto json = ParseProjectJson(
      R"x({"files":[{"filename":"../../etc/passwd","url":"https://h/x"},
                   {"filename":"ok.whl","url":"javascript:alert(1)"},
                   {"filename":"..","url":"https://h/x"},
                   {"url":"https://h/x"},
                   {"filename":"ok.whl","url":"https://h/ok.whl"}]})x",
      kEvilUrl);
  ASSERT_TRUE(json.ok());
  ASSERT_EQ(json->files.size(), 1u);
  EXPECT_EQ(json->skipped.size(), 4u);
}

TEST(HostileInputTest, HugeAttributesAndManyAttributesStayLinear) {
  std::string huge(8 << 20, 'x');
  std::string html = "<a href=\"https://h/big-1.0.tar.gz\" data-requires-python=\"" + huge + "\" ";
  for (int i = 0; i < 100000; ++i) html += "data-a" + std::to_string(i) + "=1 ";
  html += ">big</a>";
  auto start = std::chrono::steady_clock::now();
  auto page = ParseProjectHtml(html, kEvilUrl, "evil");
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->files.size(), 1u);
  EXPECT_EQ(page->files[0].requires_python->size(), huge.size());
  EXPECT_LT(ms, 10000.0);  // linear: ~250 ms in the dev build; quadratic would take hours
}

TEST(HostileInputTest, UnterminatedAndBinaryInputDoesNotFail) {
  for (std::string text : {std::string("<a href=\"https://h/x.whl"), std::string("<a href='"),
                           std::string("<"), std::string("<!--"), std::string("<script>"),
                           std::string("\0\0<a href=https://h/x.whl>\0", 25),
                           std::string("<a href=https://h/\xff\xfe.whl>x</a>")}) {
    auto page = ParseProjectHtml(text, kEvilUrl, "evil");
    EXPECT_TRUE(page.ok());
  }
}

TEST(HostileInputTest, InvalidUtf8BecomesValidJson) {
  auto page = ParseProjectHtml(
      "<a href=\"https://h/x-1.0.tar.gz\" data-yanked=\"bad \xff\xc0\xed\xa0\x80 bytes\">x</a>",
      kEvilUrl, "evil");
  ASSERT_TRUE(page.ok());
  std::string json = RenderProjectJson(*page);
  auto j = nlohmann::json::parse(json, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << json;
  EXPECT_EQ(j["files"][0]["yanked"],
            "bad \xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD bytes");
}

TEST(HostileInputTest, DeeplyNestedJsonIsRefused) {
  std::string deep = "{\"files\":" + std::string(100000, '[') + std::string(100000, ']') + "}";
  EXPECT_EQ(ParseProjectJson(deep, kEvilUrl).status().code(), StatusCode::kInvalidArgument);
  std::string tricky = "{\"name\":\"[[[[\\\"[[\",\"files\":[]}";  // brackets inside strings
  EXPECT_TRUE(ParseProjectJson(tricky, kEvilUrl).ok());
}

TEST(HostileInputTest, WrongJsonTypesAreIgnoredNotFatal) {
  auto page = ParseProjectJson(
      R"x({"name":5,"versions":"x","files":[1,"x",null,
         {"filename":"a.whl","url":"https://h/a.whl","hashes":[1],"yanked":5,"size":-1,
          "requires-python":7,"core-metadata":"sha256=00","upload-time":3}]})x",
      kEvilUrl);
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page->files.size(), 1u);
  const DistFile& f = page->files[0];
  EXPECT_TRUE(f.hashes.empty());
  EXPECT_FALSE(f.yanked.yanked);
  EXPECT_FALSE(f.size);
  EXPECT_FALSE(f.requires_python);
  EXPECT_FALSE(f.core_metadata.available);
  EXPECT_FALSE(f.upload_time);
}

}  // namespace
}  // namespace ferry::proxy::pypi
