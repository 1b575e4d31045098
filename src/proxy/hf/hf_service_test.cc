// HfService's handlers against a fake Hub and CDN (LocalHttpServer) and a memory store: what a
// client sees, and what reaches upstream. The real clients run in tests/cli/test_hf_proxy.py.
#include "proxy/hf/hf_service.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <thread>
#include <vector>

#include "base/hash.h"
#include "http/testing/local_http_server.h"
#include "storage/memory/memory_store.h"

namespace ferry::proxy::hf {
namespace {

using http::testing::LocalHttpServer;
using http::testing::ServerRequest;
using http::testing::ServerResponse;

constexpr const char* kCommit = "0123456789abcdef0123456789abcdef01234567";

std::string Body(server::Response& r) {
  if (!r.stream) return r.body;
  std::string out;
  char buf[65536];
  while (true) {
    auto n = r.stream->Read(buf, sizeof buf);
    EXPECT_TRUE(n.ok()) << n.status().ToString();
    if (!n.ok() || *n == 0) return out;
    out.append(buf, *n);
  }
}

class HfServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    spool_ = std::filesystem::temp_directory_path() / ("ferry-hf-" + std::to_string(::getpid()));
    std::filesystem::create_directories(spool_);
    blob_ = std::string(300000, 'x');
    for (size_t i = 0; i < blob_.size(); ++i) blob_[i] = static_cast<char>(i * 7 + i / 13);
    sha_ = Sha256Hex(blob_);
    cdn_ = std::make_unique<LocalHttpServer>([this](const ServerRequest& r) {
      return http::testing::ServeBody(r, blob_, {}, /*honour_range=*/true);
    });
    hub_ = std::make_unique<LocalHttpServer>([this](const ServerRequest& r) { return Hub(r); });
    store_ = storage::MakeMemoryStore();
    BlobCacheOptions co;
    co.prefix = "cache/";
    co.fetch.spool_dir = spool_.string();
    px_.cache = std::move(BlobCache::Create(store_, co)).value();
    px_.docs = std::make_shared<DocCache>(store_, "cache/");
    px_.upstream = std::make_shared<UpstreamClient>(UpstreamOptions{});
    hf_ = std::make_unique<HfService>(px_, hub_->base_url());
  }
  void TearDown() override {
    hf_.reset();
    px_.cache.reset();
    std::filesystem::remove_all(spool_);
  }

  ServerResponse Hub(const ServerRequest& r) {
    ServerResponse resp;
    if (gated_ && r.headers.count("authorization") == 0) {
      resp.status = 401;
      resp.headers["X-Error-Code"] = "GatedRepo";
      return resp;
    }
    if (r.target.starts_with("/org/m/resolve/main/model.bin")) {
      resp.status = 302;
      resp.headers = {{"X-Repo-Commit", kCommit},
                      {"X-Linked-Etag", "\"" + sha_ + "\""},
                      {"X-Linked-Size", std::to_string(blob_.size())},
                      {"X-Xet-Hash", "feed"},
                      {"Location", cdn_->base_url() + "/b?Signature=s3cret"}};
      return resp;
    }
    if (r.target.starts_with("/org/m/resolve/" + std::string(kCommit) + "/model.bin")) {
      resp.status = 302;
      resp.headers = {{"Location", cdn_->base_url() + "/b?Signature=s3cret"}};
      return resp;
    }
    if (r.target.starts_with("/api/models/org/m/tree/main")) {
      resp.body = R"([{"type":"file","path":"model.bin","oid":"a","size":3,"xetHash":"f00d"}])";
      resp.headers = {
          {"Content-Type", "application/json"},
          {"Link", "<" + hub_->base_url() + "/api/models/org/m/tree/main?cursor=2>; rel=\"next\""}};
      return resp;
    }
    resp.status = 404;
    resp.headers["X-Error-Code"] = "EntryNotFound";
    return resp;
  }

  server::Response Get(const std::string& rest, std::string method = "GET", std::string range = "",
                       std::string auth = "") {
    server::Request req;
    req.method = method;
    req.path = "/hf/" + rest;
    req.params = {{"rest", rest}};
    req.headers.Add("Host", "nas:8780");
    if (!range.empty()) req.headers.Add("Range", range);
    if (!auth.empty()) req.headers.Add("Authorization", auth);
    bool api = rest.starts_with("api/");
    if (api) req.params = {{"rest", rest.substr(4)}};
    if (api) {
      size_t q = req.params[0].second.find('?');
      if (q != std::string::npos) req.params[0].second.resize(q);
    }
    return api ? HandleApiGet(req, *hf_) : HandleResolve(req, *hf_);
  }

  size_t HubRequests() { return hub_->requests().size(); }

  std::filesystem::path spool_;
  std::string blob_, sha_;
  bool gated_ = false;
  std::unique_ptr<LocalHttpServer> cdn_, hub_;
  std::shared_ptr<storage::Store> store_;
  ProxyContext px_;
  std::unique_ptr<HfService> hf_;
};

TEST_F(HfServiceTest, ColdThenWarmWithoutUpstreamAndNoXetOrSignedUrl) {
  auto head = Get("org/m/resolve/main/model.bin", "HEAD");
  EXPECT_EQ(head.status, 200);
  EXPECT_EQ(*head.content_length, blob_.size());
  EXPECT_EQ(head.headers.Get("X-Repo-Commit").value_or(""), kCommit);
  EXPECT_EQ(head.headers.Get("X-Linked-Etag").value_or(""), "\"" + sha_ + "\"");
  EXPECT_FALSE(head.headers.Has("X-Xet-Hash"));
  EXPECT_FALSE(head.headers.Has("Location"));
  auto get = Get("org/m/resolve/main/model.bin");
  EXPECT_EQ(Body(get), blob_);
  size_t before = HubRequests();
  size_t cdn_before = cdn_->requests().size();
  auto warm = Get("org/m/resolve/main/model.bin", "GET", "bytes=0-0");
  EXPECT_EQ(warm.status, 206);
  EXPECT_EQ(warm.headers.Get("Content-Range").value_or(""),
            "bytes 0-0/" + std::to_string(blob_.size()));
  EXPECT_EQ(Body(warm), blob_.substr(0, 1));
  auto by_commit = Get("org/m/resolve/" + std::string(kCommit) + "/model.bin");
  EXPECT_EQ(Body(by_commit), blob_);
  EXPECT_EQ(HubRequests(), before);
  EXPECT_EQ(cdn_->requests().size(), cdn_before);
}

TEST_F(HfServiceTest, UpstreamErrorsPassWithTheirCodeAndDownIsNever404) {
  auto missing = Get("org/m/resolve/main/nope.bin");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(missing.headers.Get("X-Error-Code").value_or(""), "EntryNotFound");
  hub_.reset();  // upstream gone
  auto down = Get("org/m/resolve/main/other.bin");
  EXPECT_EQ(down.status, 502);
  EXPECT_FALSE(down.headers.Has("X-Error-Code"));
}

TEST_F(HfServiceTest, GatedFilesAreServedOnlyToTokensUpstreamAccepted) {
  gated_ = true;
  auto anon = Get("org/m/resolve/main/model.bin", "HEAD");
  EXPECT_EQ(anon.status, 401);
  EXPECT_EQ(anon.headers.Get("X-Error-Code").value_or(""), "GatedRepo");
  auto granted = Get("org/m/resolve/main/model.bin", "GET", "", "Bearer hf_ok");
  EXPECT_EQ(Body(granted), blob_);
  size_t before = HubRequests();
  auto again = Get("org/m/resolve/main/model.bin", "HEAD", "", "Bearer hf_ok");
  EXPECT_EQ(again.status, 200);
  EXPECT_EQ(HubRequests(), before);  // the token was accepted within the TTL
  auto other = Get("org/m/resolve/main/model.bin", "HEAD");
  EXPECT_EQ(other.status, 401);  // an anonymous client is sent upstream, which refuses
  EXPECT_GT(HubRequests(), before);
}

TEST_F(HfServiceTest, OfflineServesWhatIsCachedAndAnswers504ForTheRest) {
  EXPECT_EQ(Body(*std::make_unique<server::Response>(Get("org/m/resolve/main/model.bin"))), blob_);
  px_.options.offline = true;
  size_t before = HubRequests();
  EXPECT_EQ(Get("org/m/resolve/main/model.bin", "HEAD").status, 200);
  EXPECT_EQ(Get("org/m/resolve/main/config.json", "HEAD").status, 504);
  EXPECT_EQ(HubRequests(), before);
}

TEST_F(HfServiceTest, ConcurrentColdRequestsSendOneMetadataHeadUpstream) {
  std::vector<std::thread> clients;
  std::atomic<int> ok{0};
  for (int i = 0; i < 8; ++i) {
    clients.emplace_back([&] {
      auto r = Get("org/m/resolve/main/model.bin", "HEAD");
      if (r.status == 200) ++ok;
    });
  }
  for (auto& t : clients) t.join();
  EXPECT_EQ(ok, 8);
  EXPECT_EQ(HubRequests(), 1u);
}

TEST_F(HfServiceTest, TreeLinkPointsAtTheProxy) {
  auto tree = Get("api/models/org/m/tree/main");
  EXPECT_EQ(tree.status, 200);
  EXPECT_EQ(tree.headers.Get("Link").value_or(""),
            "<http://nas:8780/hf/api/models/org/m/tree/main?cursor=2>; rel=\"next\"");
  EXPECT_EQ(Body(tree), R"([{"oid":"a","path":"model.bin","size":3,"type":"file"}])");
  EXPECT_EQ(Body(*std::make_unique<server::Response>(Get("api/models/org/m/tree/main"))),
            R"([{"oid":"a","path":"model.bin","size":3,"type":"file"}])");  // and from the cache
}

TEST_F(HfServiceTest, XetTokensAreRefusedHereAndNeverAskedUpstream) {
  auto token = Get("api/models/org/m/xet-read-token/main");
  EXPECT_EQ(token.status, 403);
  EXPECT_EQ(token.headers.Get("X-Error-Code").value_or(""), "XetNotServed");
  EXPECT_EQ(HubRequests(), 0u);
}

}  // namespace
}  // namespace ferry::proxy::hf
