#include "proxy/pypi/proxy_urls.h"

#include <gtest/gtest.h>

#include "proxy/pypi/simple_html.h"
#include "proxy/pypi/simple_json.h"
#include "proxy/pypi/test_util.h"

namespace ferry::proxy::pypi {
namespace {

using testing::Hex64;
using testing::kNumpyUrl;
using testing::ReadFixture;

ProjectPage Numpy() {
  auto page = ParseProjectJson(ReadFixture("numpy_simple.json"), kNumpyUrl);
  EXPECT_TRUE(page.ok());
  return *page;
}

TEST(ProxyUrlsTest, FileUrlsAreContentAddressedWhenUpstreamHasSha256) {
  ProjectPage page = Numpy();
  EXPECT_EQ(ProxyFileUrl("http://nas:8080/pypi/files/", "numpy", page.files[3]),
            "http://nas:8080/pypi/files/numpy/sha256/" + Hex64('c') +
                "/numpy-1.26.4-cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64.whl");
  EXPECT_EQ(ProxyFileUrl("/pypi/files/", "numpy", page.files[0]),
            "/pypi/files/numpy/nohash/numpy-1.0.tar.gz");
  DistFile plus;
  plus.filename = "torch-2.1.0+cpu-cp311-cp311-linux_x86_64.whl";
  EXPECT_EQ(ProxyFileUrl("/pypi/files/", "torch", plus),
            "/pypi/files/torch/nohash/torch-2.1.0%2Bcpu-cp311-cp311-linux_x86_64.whl");
}

TEST(ProxyUrlsTest, RewriteChangesOnlyUrls) {
  ProjectPage page = Numpy();
  ProjectPage proxied = RewriteForProxy(page, "/pypi/files/", "numpy");
  ASSERT_EQ(proxied.files.size(), page.files.size());
  for (size_t i = 0; i < page.files.size(); ++i) {
    DistFile f = proxied.files[i];
    EXPECT_TRUE(f.url.starts_with("/pypi/files/numpy/")) << f.url;
    f.url = page.files[i].url;
    EXPECT_EQ(f, page.files[i]);
  }
  // The rendered pages keep #sha256= and the metadata hashes, and the PEP 658 rule (file URL +
  // ".metadata") lands on a path FindUpstreamFile maps back to upstream's metadata URL.
  std::string html = RenderProjectHtml(proxied);
  std::string href = "/pypi/files/numpy/sha256/" + Hex64('c') +
                     "/numpy-1.26.4-cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64.whl";
  EXPECT_NE(html.find("href=\"" + href + "#sha256=" + Hex64('c') + "\""), std::string::npos);
  EXPECT_NE(html.find("data-core-metadata=\"sha256=" + Hex64('d') + "\""), std::string::npos);
  auto req = ParseFilePath(href.substr(std::string("/pypi/files/").size()) + ".metadata");
  ASSERT_TRUE(req);
  auto up = FindUpstreamFile(page, *req);
  ASSERT_TRUE(up);
  EXPECT_TRUE(up->metadata);
  EXPECT_EQ(up->url, page.files[3].url + ".metadata");
  EXPECT_EQ(up->expected_sha256, Hex64('d'));  // the metadata's hash, not the wheel's
}

TEST(ProxyUrlsTest, RewriteUsesTheRequestedProjectNotTheUpstreamName) {
  ProjectPage page = Numpy();
  page.name = "../../admin#";  // upstream controls this field
  ProjectPage proxied = RewriteForProxy(page, "/pypi/files/", "numpy");
  EXPECT_EQ(proxied.files[0].url, "/pypi/files/numpy/nohash/numpy-1.0.tar.gz");
}

TEST(ProxyUrlsTest, ParseFilePathAcceptsTheTwoShapes) {
  auto req = ParseFilePath("numpy/sha256/" + Hex64('c') + "/a%2Bb-1.0.tar.gz");
  ASSERT_TRUE(req);
  EXPECT_EQ(req->project, "numpy");
  EXPECT_EQ(req->sha256, Hex64('c'));
  EXPECT_EQ(req->filename, "a+b-1.0.tar.gz");
  req = ParseFilePath("numpy/nohash/numpy-1.0.tar.gz");
  ASSERT_TRUE(req);
  EXPECT_EQ(req->sha256, "");
  const std::vector<std::string> bad_paths = {"NumPy/nohash/x.tar.gz",
                                              "numpy/nohash/%2E%2E",
                                              "numpy/nohash/a%2Fb",
                                              "numpy/sha256/" + Hex64('C') + "/x.whl",
                                              "numpy/sha256/abc/x.whl",
                                              "numpy/md5/00/x.whl",
                                              "numpy/nohash/",
                                              "numpy/nohash/x/y",
                                              "../nohash/x",
                                              ""};
  for (const std::string& bad : bad_paths) {
    EXPECT_FALSE(ParseFilePath(bad)) << bad;
  }
}

TEST(ProxyUrlsTest, FindUpstreamFileNeedsAListedFileWithTheSameHash) {
  ProjectPage page = Numpy();
  auto up = FindUpstreamFile(page, {"numpy", Hex64('c'), page.files[3].filename});
  ASSERT_TRUE(up);
  EXPECT_FALSE(up->metadata);
  EXPECT_EQ(up->url, page.files[3].url);
  EXPECT_EQ(up->expected_sha256, Hex64('c'));
  // Upstream replaced the file (another hash): not this one.
  EXPECT_FALSE(FindUpstreamFile(page, {"numpy", Hex64('e'), page.files[3].filename}));
  // Not listed.
  EXPECT_FALSE(FindUpstreamFile(page, {"numpy", Hex64('c'), "numpy-9.9.tar.gz"}));
  // No hash upstream: nohash path only.
  EXPECT_TRUE(FindUpstreamFile(page, {"numpy", "", "numpy-1.0.tar.gz"}));
  EXPECT_FALSE(FindUpstreamFile(page, {"numpy", Hex64('a'), "numpy-1.0.tar.gz"}));
  // Metadata of a file without core metadata: 404.
  EXPECT_FALSE(FindUpstreamFile(page, {"numpy", Hex64('b'), "numpy-1.26.4.tar.gz.metadata"}));
  // Metadata without a hash upstream: fetched, not verified.
  auto md = FindUpstreamFile(page, {"numpy", Hex64('e'), page.files[4].filename + ".metadata"});
  ASSERT_TRUE(md);
  EXPECT_EQ(md->expected_sha256, "");
}

}  // namespace
}  // namespace ferry::proxy::pypi
