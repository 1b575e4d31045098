#include "proxy/upstream/upstream_client.h"

#include <gtest/gtest.h>

#include "http/testing/local_http_server.h"
#include "proxy/upstream/http_fetcher.h"

namespace ferry::proxy {
namespace {

using http::testing::LocalHttpServer;
using http::testing::ServerRequest;
using http::testing::ServerResponse;

TEST(RedirectTargetTest, ResolvesRelativeAndAbsoluteLocations) {
  bool relative = false;
  EXPECT_EQ(*RedirectTarget("http://hub/org/a/resolve/main/f", "/api/resolve-cache/x", &relative),
            "http://hub/api/resolve-cache/x");
  EXPECT_TRUE(relative);
  EXPECT_EQ(*RedirectTarget("http://hub/a", "https://cdn/x?sig=1#frag", &relative),
            "https://cdn/x?sig=1");
  EXPECT_FALSE(relative);
  EXPECT_EQ(*RedirectTarget("http://hub/a", "//cdn/x", &relative), "http://cdn/x");
  EXPECT_FALSE(relative);
  EXPECT_FALSE(RedirectTarget("http://hub/a", "javascript:alert(1)", &relative).has_value());
}

TEST(OriginOfTest, MakesDefaultPortsExplicit) {
  EXPECT_EQ(OriginOf("HTTPS://Hub.example/x"), "https://hub.example:443");
  EXPECT_EQ(OriginOf("http://hub:8080/x?y"), "http://hub:8080");
  EXPECT_EQ(OriginOf("http://user@hub/x"), "http://hub:80");
  EXPECT_EQ(OriginOf("ftp://hub/x"), "");
}

TEST(UpstreamErrorTest, KeepsTheHubErrorCodeAndNeverTheQuery) {
  http::Response r{
      .status = 404,
      .headers = {{"x-error-code", "EntryNotFound"}, {"x-error-message", "no such file"}}};
  Status s = UpstreamError("HEAD", "http://hub/f?token=secret", r);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.detail().remote_code, "EntryNotFound");
  EXPECT_EQ(s.detail().http_status, 404);
  EXPECT_EQ(s.message().find("secret"), std::string::npos);
  EXPECT_NE(s.message().find("no such file"), std::string::npos);
  EXPECT_EQ(UpstreamError("GET", "http://x", {.status = 503}).code(), StatusCode::kUnavailable);
  EXPECT_TRUE(UpstreamError("GET", "http://x", {.status = 429}).detail().throttled);
}

// A hub on one port redirecting to a "CDN" on another: the token must not follow.
TEST(UpstreamClientTest, FollowsByPolicyAndDropsAuthorizationAcrossOrigins) {
  LocalHttpServer cdn([](const ServerRequest& r) {
    return http::testing::ServeBody(r, "0123456789", {}, /*honour_range=*/true);
  });
  std::string cdn_url = cdn.base_url() + "/blob?sig=abc";
  LocalHttpServer hub([&](const ServerRequest& r) {
    ServerResponse resp;
    if (r.target == "/renamed") {
      resp.status = 307;
      resp.headers["Location"] = "/file";
    } else {
      resp.status = 302;
      resp.headers["Location"] = cdn_url;
      resp.headers["X-Linked-Size"] = "10";
    }
    return resp;
  });
  UpstreamClient client({});
  http::Headers auth = {{"Authorization", "Bearer hf_secret"}};

  // kRelative: the rename is followed, the CDN redirect is returned with its headers.
  std::string final_url;
  auto head = client.Send({.method = "HEAD",
                           .url = hub.base_url() + "/renamed",
                           .headers = auth,
                           .redirects = Redirects::kRelative},
                          nullptr, nullptr, &final_url);
  ASSERT_TRUE(head.ok()) << head.status().ToString();
  EXPECT_EQ(head->status, 302);
  EXPECT_EQ(head->Header("x-linked-size").value_or(""), "10");
  EXPECT_EQ(final_url, hub.base_url() + "/file");

  // kAll through an HttpFetcher: the bytes come from the CDN, ranged, without the token.
  auto shared = std::make_shared<UpstreamClient>(UpstreamOptions{});
  HttpFetcher fetcher(shared, hub.base_url() + "/file", auth);
  std::string got;
  Status s = fetcher.Fetch({.offset = 3, .length = 4}, [&](std::string_view c) {
    got.append(c);
    return Status();
  });
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(got, "3456");
  for (const auto& r : hub.requests()) EXPECT_EQ(r.headers.at("authorization"), "Bearer hf_secret");
  ASSERT_FALSE(cdn.requests().empty());
  for (const auto& r : cdn.requests()) EXPECT_FALSE(r.headers.contains("authorization"));
  EXPECT_EQ(fetcher.Describe().find("sig="), std::string::npos);
}

TEST(HttpFetcherTest, SkipsLeadingBytesOfAWholeAnswerAndMapsErrors) {
  LocalHttpServer plain([](const ServerRequest& r) {
    if (r.target == "/gone") return ServerResponse{.status = 503, .headers = {}, .body = "busy"};
    return http::testing::ServeBody(r, "abcdefgh", {}, /*honour_range=*/false);
  });
  auto client = std::make_shared<UpstreamClient>(UpstreamOptions{});
  std::string got;
  auto sink = [&](std::string_view c) {
    got.append(c);
    return Status();
  };
  ASSERT_TRUE(HttpFetcher(client, plain.base_url() + "/f").Fetch({.offset = 5}, sink).ok());
  EXPECT_EQ(got, "fgh");
  Status s = HttpFetcher(client, plain.base_url() + "/gone").Fetch({}, sink);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_TRUE(IsRetryable(s));
}

}  // namespace
}  // namespace ferry::proxy
