#include "proxy/pypi/url.h"

#include <gtest/gtest.h>

namespace ferry::proxy::pypi {
namespace {

constexpr const char* kBase = "https://pypi.org/simple/numpy/";

TEST(ResolveUrlTest, ResolvesRelativeForms) {
  EXPECT_EQ(*ResolveUrl(kBase, "https://files.example/a.whl#sha256=00"),
            "https://files.example/a.whl#sha256=00");
  EXPECT_EQ(*ResolveUrl(kBase, "//files.example/a.whl"), "https://files.example/a.whl");
  EXPECT_EQ(*ResolveUrl(kBase, "/packages/a.whl"), "https://pypi.org/packages/a.whl");
  EXPECT_EQ(*ResolveUrl(kBase, "a.whl"), "https://pypi.org/simple/numpy/a.whl");
  EXPECT_EQ(*ResolveUrl(kBase, "../../packages/a.whl#md5=1"),
            "https://pypi.org/packages/a.whl#md5=1");
  EXPECT_EQ(*ResolveUrl(kBase, "../../../../a.whl"), "https://pypi.org/a.whl");
  EXPECT_EQ(*ResolveUrl(kBase, "./x/./y/../a.whl?q=1"),
            "https://pypi.org/simple/numpy/x/a.whl?q=1");
  EXPECT_EQ(*ResolveUrl("http://h:8080/s/p/index.html", "a.whl"), "http://h:8080/s/p/a.whl");
  EXPECT_EQ(*ResolveUrl(kBase, "  a.whl \n"), "https://pypi.org/simple/numpy/a.whl");
  EXPECT_EQ(*ResolveUrl("HTTPS://pypi.org", "a"), "https://pypi.org/a");
}

TEST(ResolveUrlTest, RefusesOtherSchemes) {
  for (const char* ref : {"javascript:alert(1)", "JavaScript:alert(1)", "data:text/html,x",
                          "file:///etc/passwd", "ftp://h/a.whl", "http:a.whl", "https://"}) {
    EXPECT_FALSE(ResolveUrl(kBase, ref)) << ref;
  }
  EXPECT_FALSE(ResolveUrl("file:///x/", "a.whl"));
  EXPECT_FALSE(ResolveUrl("", "a.whl"));
}

TEST(FilenameOfUrlTest, DecodesLastSegmentAndRefusesUnsafeNames) {
  EXPECT_EQ(*FilenameOfUrl("https://h/p/foo%2Bbar-1.0.tar.gz?x=1#sha256=0"), "foo+bar-1.0.tar.gz");
  EXPECT_FALSE(FilenameOfUrl("https://h/p/"));
  EXPECT_FALSE(FilenameOfUrl("https://h/p/%2E%2E"));
  EXPECT_FALSE(FilenameOfUrl("https://h/p/a%2Fb.whl"));
  EXPECT_FALSE(FilenameOfUrl("https://h/p/a%5Cb.whl"));
  EXPECT_FALSE(FilenameOfUrl("https://h/p/a%00.whl"));
  EXPECT_FALSE(FilenameOfUrl("https://h/p/a%zz.whl"));
  EXPECT_TRUE(IsSafeFilename("numpy-1.26.4.tar.gz"));
  EXPECT_FALSE(IsSafeFilename("."));
  EXPECT_FALSE(IsSafeFilename(std::string(256, 'a')));
  EXPECT_TRUE(IsSafeFilename("caf\xC3\xA9-1.0.tar.gz"));
  EXPECT_FALSE(IsSafeFilename("bad-\xFF-1.0.tar.gz"));  // not UTF-8: JSON could not carry it
  EXPECT_FALSE(IsSafeFilename("bad-\xC3"));
  EXPECT_FALSE(IsSafeFilename("bad-\xED\xA0\x80"));  // a surrogate
}

}  // namespace
}  // namespace ferry::proxy::pypi
