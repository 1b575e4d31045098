#include "proxy/pypi/simple_html.h"

#include <gtest/gtest.h>

#include "proxy/pypi/simple_json.h"
#include "proxy/pypi/test_util.h"

namespace ferry::proxy::pypi {
namespace {

using testing::Hex64;
using testing::kNumpyUrl;
using testing::ReadFixture;

ProjectPage NumpyFromHtml() {
  auto page = ParseProjectHtml(ReadFixture("numpy_simple.html"), kNumpyUrl, "NumPy");
  EXPECT_TRUE(page.ok()) << page.status().ToString();
  return *page;
}

TEST(SimpleHtmlTest, ParsesPypiOrgProjectPage) {
  ProjectPage page = NumpyFromHtml();
  EXPECT_EQ(page.name, "numpy");
  EXPECT_EQ(page.upstream_api_version, "1.1");
  EXPECT_TRUE(page.skipped.empty());
  ASSERT_EQ(page.files.size(), 6u);

  const DistFile& old = page.files[0];  // no hash, no requires-python
  EXPECT_EQ(old.filename, "numpy-1.0.tar.gz");
  EXPECT_EQ(old.url, "https://files.pythonhosted.org/packages/source/n/numpy/numpy-1.0.tar.gz");
  EXPECT_TRUE(old.hashes.empty());
  EXPECT_FALSE(old.requires_python);
  EXPECT_FALSE(old.yanked.yanked);
  EXPECT_FALSE(old.core_metadata.available);

  const DistFile& yanked = page.files[1];
  EXPECT_EQ(yanked.hashes.at("sha256"), Hex64('a'));
  EXPECT_EQ(*yanked.requires_python, ">=3.7,<3.11");
  EXPECT_EQ(yanked.yanked, (Yanked{true, "Incorrect wheel tags; use 1.21.1"}));

  const DistFile& wheel = page.files[3];
  EXPECT_EQ(wheel.Sha256(), Hex64('c'));
  EXPECT_EQ(wheel.url.find('#'), std::string::npos);
  EXPECT_EQ(wheel.core_metadata, (CoreMetadata{true, {{"sha256", Hex64('d')}}}));

  const DistFile& no_metadata_hash = page.files[4];
  EXPECT_EQ(no_metadata_hash.core_metadata, (CoreMetadata{true, {}}));
  EXPECT_EQ(no_metadata_hash.yanked, (Yanked{true, ""}));

  // Only data-core-metadata given (PEP 714 server): taken as is.
  EXPECT_EQ(page.files[5].core_metadata, (CoreMetadata{true, {{"sha256", Hex64('a')}}}));
}

TEST(SimpleHtmlTest, ParsesOtherIndexesMarkup) {
  auto page = ParseProjectHtml(ReadFixture("mirror_page.html"),
                               "https://mirror.example.org/root/pypi/+simple/foo-bar/", "Foo_Bar");
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  EXPECT_EQ(page->name, "foo-bar");
  // The link inside <script> and the commented-out one are not files.
  ASSERT_EQ(page->files.size(), 4u);
  const DistFile& a = page->files[0];
  EXPECT_EQ(a.url, "https://mirror.example.org/root/+f/12/foo_bar-1.0-py3-none-any.whl");
  EXPECT_EQ(a.hashes.at("sha256"), Hex64('a'));  // "SHA256=AAAA..." lowercased
  EXPECT_EQ(*a.requires_python, ">=3.8");
  const DistFile& b = page->files[1];  // unquoted href resolved against <base>
  EXPECT_EQ(b.url, "https://mirror.example.org/root/pypi/+f/foo_bar-1.0.tar.gz");
  EXPECT_EQ(b.hashes.at("md5"), "0123456789abcdef0123456789abcdef");
  EXPECT_EQ(b.Sha256(), "");
  EXPECT_EQ(b.yanked, (Yanked{true, ""}));  // bare data-yanked
  const DistFile& c = page->files[2];       // attributes over lines, metadata before href
  EXPECT_EQ(c.url, "https://mirror.example.org/root/pypi/+f/34/foo_bar-2.0-py3-none-any.whl");
  EXPECT_EQ(*c.requires_python, ">=3.9,<4");
  EXPECT_EQ(c.core_metadata, (CoreMetadata{true, {{"sha256", Hex64('b')}}}));
  const DistFile& d = page->files[3];  // percent-encoded name, query kept, &amp; decoded
  EXPECT_EQ(d.filename, "foo+bar-2.1+local.tar.gz");
  EXPECT_EQ(d.url, "https://mirror.example.org/files/foo%2Bbar-2.1%2Blocal.tar.gz?token=abc&x=1");
}

TEST(SimpleHtmlTest, RendersEveryAttributeEscaped) {
  ProjectPage page = NumpyFromHtml();
  std::string html = RenderProjectHtml(page);
  EXPECT_NE(html.find("<meta name=\"pypi:repository-version\" content=\"1.0\">"),
            std::string::npos);
  EXPECT_NE(
      html.find("numpy-1.21.0-cp39-cp39-manylinux_2_12_x86_64.manylinux2010_x86_64.whl#sha256=" +
                Hex64('a') +
                "\" data-requires-python=\"&gt;=3.7,&lt;3.11\" data-yanked=\""
                "Incorrect wheel tags; use 1.21.1\""),
      std::string::npos)
      << html;
  // PEP 714: both attributes, the same value, exactly upstream's hash.
  EXPECT_NE(html.find("data-dist-info-metadata=\"sha256=" + Hex64('d') +
                      "\" data-core-metadata=\"sha256=" + Hex64('d') + "\""),
            std::string::npos);
  EXPECT_NE(html.find("data-dist-info-metadata=\"true\" data-core-metadata=\"true\""),
            std::string::npos);
  // The PEP 714-only upstream file gets the legacy attribute too, with the same hash.
  EXPECT_NE(html.find("data-dist-info-metadata=\"sha256=" + Hex64('a') +
                      "\" data-core-metadata=\"sha256=" + Hex64('a') + "\""),
            std::string::npos);
  // A file without hash gets no fragment and no invented metadata.
  EXPECT_NE(html.find("numpy-1.0.tar.gz\">numpy-1.0.tar.gz</a>"), std::string::npos);
}

TEST(SimpleHtmlTest, RoundTripKeepsEveryField) {
  ProjectPage page = NumpyFromHtml();
  auto again = ParseProjectHtml(RenderProjectHtml(page), kNumpyUrl, "numpy");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->files, page.files);
  // HTML -> JSON -> model keeps every field too.
  auto via_json = ParseProjectJson(RenderProjectJson(page), kNumpyUrl);
  ASSERT_TRUE(via_json.ok()) << via_json.status().ToString();
  EXPECT_EQ(via_json->files, page.files);
  EXPECT_EQ(via_json->name, "numpy");
}

TEST(SimpleHtmlTest, RefusesUnknownMajorVersionAndBadPageUrl) {
  auto page = ParseProjectHtml(
      "<meta name=\"pypi:repository-version\" content=\"2.0\"><a href=a.whl>a.whl</a>", kNumpyUrl,
      "numpy");
  EXPECT_EQ(page.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseProjectHtml("", "/simple/numpy/", "numpy").status().code(),
            StatusCode::kInvalidArgument);
}

TEST(SimpleHtmlTest, IndexParsesAndRenders) {
  auto list = ParseIndexHtml(
      "<!DOCTYPE html><html><body><a href=\"/simple/numpy/\">numpy</a>\n"
      "<a href='/simple/zope-interface/'>zope.interface</a><a href=x>bad name!</a></body></html>");
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->names, (std::vector<std::string>{"numpy", "zope.interface"}));
  std::string html = RenderIndexHtml(*list);
  EXPECT_NE(html.find("<a href=\"zope-interface/\">zope.interface</a>"), std::string::npos);
  auto again = ParseIndexHtml(html);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->names, list->names);
}

}  // namespace
}  // namespace ferry::proxy::pypi
