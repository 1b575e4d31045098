// The PyPI handlers against a fake upstream index (LocalHttpServer) over a memory store: what
// pip relies on (docs/semantics/pypi.md), without sockets on the proxy side.
#include "proxy/pypi_routes/pypi_routes.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include <atomic>

#include "base/hash.h"
#include "http/testing/local_http_server.h"
#include "storage/memory/memory_store.h"

namespace ferry::proxy {
namespace {

using http::testing::LocalHttpServer;
using http::testing::ServerRequest;
using http::testing::ServerResponse;

const std::string kWheel = std::string(200000, 'w') + "wheel-bytes";  // > kProbeBytes
const std::string kMetadata = "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n\n";
constexpr const char* kWheelUrl = "/f/demo-1.0-py3-none-any.whl";
const std::string kOther = "a file listed without a hash";

// A fake upstream index: /simple/demo/ (JSON or HTML), /simple/ and the files.
class FakeIndex {
 public:
  FakeIndex() : server_([this](const ServerRequest& r) { return Answer(r); }) {}
  std::string url() const { return server_.base_url() + "/simple/"; }
  int Count(const std::string& target) const {
    int n = 0;
    for (const auto& r : server_.requests()) n += r.target == target;
    return n;
  }
  std::atomic<bool> down{false};
  std::atomic<bool> corrupt{false};  // the page's sha256 is not the wheel's
  std::atomic<bool> html_only{false};
  std::atomic<bool> v2{false};
  std::atomic<bool> released{false};  // the page also lists demo-1.1

 private:
  ServerResponse Answer(const ServerRequest& r) {
    if (down) return {.status = 503, .body = "down"};
    if (r.target == "/simple/demo/") {
      std::string sha = corrupt ? std::string(64, 'a') : Sha256Hex(kWheel);
      bool json = !html_only && r.headers.count("accept") &&
                  r.headers.at("accept").find("v1+json") != std::string::npos;
      if (json) {
        // A file entry of the JSON page; `extra` goes after the hashes.
        auto file = [&](std::string name, std::string url, std::string hash, std::string extra) {
          return R"({"filename":")" + name + R"(","url":")" + url + R"(","hashes":{)" + hash + "}" +
                 extra + "}";
        };
        std::string files =
            file("demo-1.0-py3-none-any.whl", kWheelUrl, R"("sha256":")" + sha + "\"",
                 R"(,"size":)" + std::to_string(kWheel.size()) + R"(,"core-metadata":{"sha256":")" +
                     Sha256Hex(kMetadata) + "\"}") +
            "," + file("demo-1.0.tar.gz", "/f/demo-1.0.tar.gz", "", "");
        if (released) {
          files +=
              "," + file("demo-1.1-py3-none-any.whl", kWheelUrl, R"("sha256":")" + sha + "\"", "");
        }
        return {.headers = {{"Content-Type", v2 ? "application/vnd.pypi.simple.v2+json"
                                                : "application/vnd.pypi.simple.v1+json"}},
                .body = R"({"meta":{"api-version":"1.1"},"name":"demo","versions":["1.0"],)"
                        R"("files":[)" +
                        files + "]}"};
      }
      return {.headers = {{"Content-Type", "text/html"}},
              .body = "<a href=\"" + std::string(kWheelUrl) + "#sha256=" + sha +
                      "\">demo-1.0-py3-none-any.whl</a>"};
    }
    if (r.target == "/simple/") {
      return {.headers = {{"Content-Type", "text/html"}}, .body = "<a href=\"demo/\">Demo</a>"};
    }
    if (r.target == kWheelUrl) return http::testing::ServeBody(r, kWheel, {}, true);
    if (r.target == std::string(kWheelUrl) + ".metadata")
      return http::testing::ServeBody(r, kMetadata, {}, true);
    if (r.target == "/f/demo-1.0.tar.gz") return http::testing::ServeBody(r, kOther, {}, true);
    return {.status = 404, .body = "no such page"};
  }
  LocalHttpServer server_;
};

class PypiRoutesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = storage::MakeMemoryStore();
    px_.cache = std::move(*BlobCache::Create(store, BlobCacheOptions{.prefix = "cache/"}));
    px_.docs = std::make_shared<DocCache>(store, "cache/");
    px_.upstream = std::make_shared<UpstreamClient>(UpstreamOptions{});
    px_.now_ms = [this] { return now_; };
    ASSERT_TRUE(
        PypiRoutes(px_, PypiIndex{.name = "", .upstream = index_.url()}, &metrics_)(router_).ok());
  }
  server::Response Get(const std::string& path, const std::string& accept = "",
                       const std::string& method = "GET") {
    server::Request r;
    r.method = method;
    r.path = path;
    if (!accept.empty()) r.headers.Set("Accept", accept);
    return router_.Dispatch(std::move(r));
  }
  // The body, read from the stream when there is one; "<error: ...>" when it fails.
  static std::string Body(server::Response& r) {
    if (!r.stream) return r.body;
    std::string out(4096, '\0'), got;
    while (true) {
      auto n = r.stream->Read(out.data(), out.size());
      if (!n.ok()) return "<error: " + n.status().message() + ">";
      if (*n == 0) return got;
      got.append(out.data(), *n);
    }
  }
  std::string WheelPath() const {
    return "/pypi/files/demo/sha256/" + Sha256Hex(kWheel) + "/demo-1.0-py3-none-any.whl";
  }
  uint64_t Pages(const std::string& result) {
    return metrics_.GetCounter("ferry_pypi_pages_total", "", {{"result", result}}).value();
  }

  FakeIndex index_;
  ProxyContext px_;
  int64_t now_ = 1'000'000;
  server::MetricsRegistry metrics_;
  server::Router router_;
};

TEST_F(PypiRoutesTest, NegotiatesFormatsRewritesUrlsAndVariesOnAccept) {
  auto r = Get("/pypi/simple/demo/", "application/vnd.pypi.simple.v1+json");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.headers.Get("Content-Type"), "application/vnd.pypi.simple.v1+json");
  EXPECT_EQ(r.headers.Get("Vary"), "Accept");
  EXPECT_NE(r.body.find("\"url\":\"" + WheelPath() + "\""), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("/pypi/files/demo/nohash/demo-1.0.tar.gz"), std::string::npos);
  r = Get("/pypi/simple/demo/");
  EXPECT_EQ(r.headers.Get("Content-Type"), "text/html; charset=utf-8");
  EXPECT_NE(r.body.find("href=\"" + WheelPath() + "#sha256="), std::string::npos) << r.body;
  r = Get("/pypi/simple/demo/", "application/json");
  EXPECT_EQ(r.status, 406);
  EXPECT_EQ(r.headers.Get("Vary"), "Accept");
  r = Get("/pypi/simple/Demo");
  EXPECT_EQ(r.status, 301);
  EXPECT_EQ(r.headers.Get("Location"), "/pypi/simple/demo/");
  EXPECT_EQ(r.headers.Get("Vary"), "Accept");
  r = Get("/pypi/simple");
  EXPECT_EQ(r.status, 301);
  EXPECT_EQ(r.headers.Get("Location"), "/pypi/simple/");
  EXPECT_EQ(Get("/pypi/simple/-bad-/").status, 404);
  EXPECT_EQ(Get("/pypi/simple/nothere/").status, 404);  // upstream's 404
  r = Get("/pypi/simple/", "application/vnd.pypi.simple.v1+json");
  EXPECT_EQ(r.body, R"({"meta":{"api-version":"1.0"},"projects":[{"name":"Demo"}]})") << r.body;
  EXPECT_EQ(index_.Count("/simple/demo/"), 1);  // one fetch for both formats
}

TEST_F(PypiRoutesTest, ReusesPagesForTheTtlThenServesStaleWhenUpstreamFails) {
  EXPECT_EQ(Get("/pypi/simple/demo/").status, 200);
  now_ += 599'000;
  EXPECT_EQ(Get("/pypi/simple/demo/").status, 200);
  EXPECT_EQ(index_.Count("/simple/demo/"), 1);
  now_ += 2'000;
  EXPECT_EQ(Get("/pypi/simple/demo/").status, 200);
  EXPECT_EQ(index_.Count("/simple/demo/"), 2);
  now_ += 601'000;
  index_.down = true;
  auto r = Get("/pypi/simple/demo/");
  EXPECT_EQ(r.status, 200);
  EXPECT_NE(r.body.find(WheelPath()), std::string::npos);
  EXPECT_EQ(Pages("hit"), 1u);
  EXPECT_EQ(Pages("miss"), 2u);
  EXPECT_EQ(Pages("stale"), 1u);
  // Within 30 s of that failure upstream is not asked again; after it, it is.
  EXPECT_EQ(index_.Count("/simple/demo/"), 3);
  now_ += 29'000;
  EXPECT_EQ(Get("/pypi/simple/demo/").status, 200);
  EXPECT_EQ(index_.Count("/simple/demo/"), 3);
  now_ += 1'000;
  index_.down = false;
  EXPECT_EQ(Get("/pypi/simple/demo/").status, 200);
  EXPECT_EQ(index_.Count("/simple/demo/"), 4);
  EXPECT_EQ(Pages("stale"), 2u);
  EXPECT_EQ(Pages("miss"), 3u);
  index_.down = true;
  EXPECT_EQ(Get("/pypi/simple/other/").status, 502);  // nothing stored
}

TEST_F(PypiRoutesTest, UpstreamsNotFoundIsRememberedForTheTtl) {
  // pip asks every index for every project: a warm machine must not ask upstream again.
  EXPECT_EQ(Get("/pypi/simple/nothere/").status, 404);
  now_ += 599'000;
  EXPECT_EQ(Get("/pypi/simple/nothere/").status, 404);
  EXPECT_EQ(index_.Count("/simple/nothere/"), 1);
  now_ += 2'000;
  EXPECT_EQ(Get("/pypi/simple/nothere/").status, 404);
  EXPECT_EQ(index_.Count("/simple/nothere/"), 2);
  px_.options.offline = true;
  EXPECT_EQ(Get("/pypi/simple/nothere/").status, 404);  // known missing, not "not cached"
}

TEST_F(PypiRoutesTest, ANamedIndexHasItsOwnRootPagesAndCounters) {
  FakeIndex other;
  ASSERT_TRUE(
      PypiRoutes(px_, PypiIndex{.name = "torch-cu124", .upstream = other.url()}, &metrics_)(router_)
          .ok());
  auto r = Get("/pypi/torch-cu124/simple/demo/");
  EXPECT_EQ(r.status, 200);
  EXPECT_NE(r.body.find("/pypi/torch-cu124/files/demo/sha256/"), std::string::npos) << r.body;
  EXPECT_EQ(Get("/pypi/torch-cu124/simple/Demo").headers.Get("Location"),
            "/pypi/torch-cu124/simple/demo/");
  std::string wheel =
      "/pypi/torch-cu124/files/demo/sha256/" + Sha256Hex(kWheel) + "/demo-1.0-py3-none-any.whl";
  auto w = Get(wheel);
  EXPECT_EQ(Body(w), kWheel);
  EXPECT_EQ(Get("/pypi/simple/demo/").status, 200);  // the unnamed index: its own page
  EXPECT_EQ(other.Count("/simple/demo/"), 1);
  EXPECT_EQ(index_.Count("/simple/demo/"), 1);
  EXPECT_EQ(
      metrics_
          .GetCounter("ferry_pypi_pages_total", "", {{"result", "miss"}, {"index", "torch-cu124"}})
          .value(),
      1u);
}

TEST_F(PypiRoutesTest, ConcurrentMissesFetchAPageOnce) {
  std::vector<std::thread> clients;
  std::atomic<int> ok{0};
  for (int i = 0; i < 8; ++i) {
    clients.emplace_back([&] {
      if (Get("/pypi/simple/demo/").status == 200) ++ok;
    });
  }
  for (auto& t : clients) t.join();
  EXPECT_EQ(ok, 8);
  EXPECT_EQ(index_.Count("/simple/demo/"), 1);
}

TEST_F(PypiRoutesTest, AFileNotOnTheStoredPageFetchesThePageOnceMore) {
  EXPECT_EQ(Get("/pypi/simple/demo/").status, 200);
  index_.released = true;  // upstream published a file since
  std::string path = "/pypi/files/demo/sha256/" + Sha256Hex(kWheel) + "/demo-1.1-py3-none-any.whl";
  EXPECT_EQ(Get(path).status, 404);  // the page is younger than 10 s: not fetched again
  EXPECT_EQ(index_.Count("/simple/demo/"), 1);
  now_ += 10'000;
  auto r = Get(path);
  EXPECT_EQ(r.status, 200);
  EXPECT_TRUE(Body(r) == kWheel);
  EXPECT_EQ(index_.Count("/simple/demo/"), 2);
}

TEST_F(PypiRoutesTest, HtmlUpstreamPagesWorkWithTheSizeFromOneHead) {
  index_.html_only = true;
  auto r = Get("/pypi/simple/demo/", "application/vnd.pypi.simple.v1+json");
  EXPECT_EQ(r.status, 200);
  EXPECT_NE(r.body.find(WheelPath()), std::string::npos) << r.body;
  r = Get(WheelPath());  // no PEP 700 size in HTML: one HEAD upstream, then the fill
  EXPECT_TRUE(Body(r) == kWheel);
  r = Get(WheelPath(), "", "HEAD");
  EXPECT_EQ(r.content_length, kWheel.size());
  EXPECT_EQ(index_.Count("/f/demo-1.0-py3-none-any.whl"), 2);
}

TEST_F(PypiRoutesTest, RefusesUnknownApiVersions) {
  index_.v2 = true;
  EXPECT_EQ(Get("/pypi/simple/demo/").status, 502);
}

TEST_F(PypiRoutesTest, FilesAreVerifiedCachedAndServedOfflineOnceCached) {
  auto r = Get(WheelPath());
  EXPECT_EQ(r.status, 200);
  EXPECT_TRUE(Body(r) == kWheel);
  r = Get(WheelPath() + ".metadata");
  EXPECT_EQ(Body(r), kMetadata);
  EXPECT_EQ(index_.Count("/f/demo-1.0-py3-none-any.whl.metadata"),
            2);  // its size by HEAD, then the fill
  int before = static_cast<int>(index_.Count("/f/demo-1.0-py3-none-any.whl"));
  r = Get(WheelPath());
  EXPECT_TRUE(Body(r) == kWheel);
  r = Get(WheelPath() + ".metadata", "", "HEAD");
  EXPECT_EQ(r.content_length, kMetadata.size());
  EXPECT_EQ(index_.Count("/f/demo-1.0-py3-none-any.whl"), before);
  EXPECT_EQ(index_.Count("/f/demo-1.0-py3-none-any.whl.metadata"), 2);
  // Not listed, or another hash: 404.
  EXPECT_EQ(
      Get("/pypi/files/demo/sha256/" + std::string(64, 'b') + "/demo-1.0-py3-none-any.whl").status,
      404);
  EXPECT_EQ(Get("/pypi/files/demo/nohash/x.whl").status, 404);
  EXPECT_EQ(Get("/pypi/files/demo/zzz").status, 404);
  // A file without sha256 is streamed, not cached.
  r = Get("/pypi/files/demo/nohash/demo-1.0.tar.gz");
  EXPECT_EQ(Body(r), kOther);

  px_.options.offline = true;
  index_.down = true;
  now_ += 3600'000;
  r = Get(WheelPath());
  EXPECT_TRUE(Body(r) == kWheel);
  EXPECT_EQ(Get("/pypi/files/demo/nohash/demo-1.0.tar.gz").status, 504);
  EXPECT_EQ(Get("/pypi/simple/other/").status, 504);
}

TEST_F(PypiRoutesTest, UncachedFileWithUpstreamDownIs502Not404) {
  EXPECT_EQ(Get("/pypi/simple/demo/").status, 200);
  index_.down = true;
  auto r = Get(WheelPath() + ".metadata");  // needs a HEAD for its size
  EXPECT_EQ(r.status, 502);
  r = Get(WheelPath());  // size known from the page: the first bytes fail
  EXPECT_EQ(r.status, 502);
}

TEST_F(PypiRoutesTest, CorruptUpstreamIsNeverPublished) {
  index_.corrupt = true;
  std::string path =
      "/pypi/files/demo/sha256/" + std::string(64, 'a') + "/demo-1.0-py3-none-any.whl";
  auto r = Get(path);  // past its first 64 KiB: the body fails before its last byte
  EXPECT_TRUE(r.status == 502 || Body(r).starts_with("<error")) << r.status;
  auto digest = Digest::Parse(DigestAlgorithm::kSha256, std::string(64, 'a'));
  EXPECT_EQ(px_.cache->blobs().Stat(*digest).status().code(), StatusCode::kNotFound);
  index_.corrupt = false;
  now_ += 3600'000;
  r = Get(WheelPath());
  EXPECT_TRUE(Body(r) == kWheel);
}

TEST_F(PypiRoutesTest, RangeOfAnUncachedWheelIsAnswered206) {
  // A range of the wheel: answered 206 from what the fill has received.
  server::Request req;
  req.method = "GET";
  req.path = WheelPath();
  req.headers.Set("Range", "bytes=-100");
  auto r = router_.Dispatch(std::move(req));
  EXPECT_EQ(r.status, 206);
  EXPECT_EQ(Body(r), kWheel.substr(kWheel.size() - 100));
}

}  // namespace
}  // namespace ferry::proxy
