#include "storage/web/http_store.h"

#include <gtest/gtest.h>

#include <atomic>

#include "http/http_client.h"
#include "http/testing/local_http_server.h"

namespace ferry::storage {
namespace {

using http::testing::LocalHttpServer;
using http::testing::ServerRequest;
using http::testing::ServerResponse;

const std::string kBody = "0123456789abcdefghij";

ServerResponse Serve(const ServerRequest& r, bool honour_range) {
  if (r.target != "/files/data.bin?v=1") return ServerResponse{404, {}, ""};
  return http::testing::ServeBody(
      r, kBody, {{"ETag", "\"v1\""}, {"Last-Modified", "Fri, 24 May 2013 00:00:00 GMT"}},
      honour_range);
}

std::shared_ptr<Store> Make(const LocalHttpServer& server) {
  return MakeHttpStore({.origin = server.base_url(), .http = std::make_shared<http::Client>()});
}

TEST(HttpStoreTest, StatAndRangedRead) {
  LocalHttpServer server([](const ServerRequest& r) { return Serve(r, true); });
  auto store = Make(server);
  auto info = store->Stat("files/data.bin?v=1");
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->size, kBody.size());
  EXPECT_EQ(*store->ReadAll("files/data.bin?v=1"), kBody);
  EXPECT_EQ(*store->ReadAll("files/data.bin?v=1", {.range = ByteRange{5, 3}}), "567");
  EXPECT_EQ(store->Stat("files/missing").status().code(), StatusCode::kNotFound);
}

TEST(HttpStoreTest, ServerIgnoringRangeStillGivesTheRightBytes) {
  LocalHttpServer server([](const ServerRequest& r) { return Serve(r, false); });
  auto store = Make(server);
  EXPECT_EQ(*store->ReadAll("files/data.bin?v=1", {.range = ByteRange{5, 3}}), "567");
}

TEST(HttpStoreTest, EtagsAreUnquotedLikeS3s) {
  LocalHttpServer server([](const ServerRequest& r) { return Serve(r, true); });
  auto store = Make(server);
  EXPECT_EQ(store->Stat("files/data.bin?v=1")->etag, "v1");
  ObjectInfo info;
  ASSERT_TRUE(store->ReadAll("files/data.bin?v=1", {.range = ByteRange{1, 2}, .info = &info}).ok());
  EXPECT_EQ(info.etag, "v1");
  EXPECT_EQ(info.size, kBody.size());
  EXPECT_TRUE(info.modified.has_value());
  // The etag a Stat gave pins a read (sent quoted, as HTTP wants it).
  EXPECT_EQ(*store->ReadAll("files/data.bin?v=1", {.if_match = info.etag}), kBody);
  EXPECT_EQ(server.requests().back().headers["if-match"], "\"v1\"");
}

TEST(HttpStoreTest, IsReadOnly) {
  LocalHttpServer server([](const ServerRequest& r) { return Serve(r, true); });
  auto store = Make(server);
  EXPECT_EQ(store->WriteAll("x", "y").status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(store->Delete("x").code(), StatusCode::kUnimplemented);
  EXPECT_NE(store->List({}).status().message().find("read-only"), std::string::npos);
}

TEST(HttpStoreTest, StalledReadResumesFromTheFirstUndeliveredByte) {
  std::atomic<int> gets{0};
  LocalHttpServer server([&](const ServerRequest& r) {
    ServerResponse resp = Serve(r, true);
    if (r.method == "GET" && gets++ == 0) {  // the first answer trickles after 5 bytes
      resp.trickle_after = 5;
      resp.trickle_interval = std::chrono::milliseconds(200);
    }
    return resp;
  });
  auto store = MakeHttpStore({.origin = server.base_url(),
                              .http = std::make_shared<http::Client>(
                                  http::ClientOptions{.low_speed_time = std::chrono::seconds(1)}),
                              .retry = RetryPolicy{.base_delay = std::chrono::milliseconds(1)}});
  auto got = store->ReadAll("files/data.bin?v=1");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, kBody);
  auto requests = server.requests();
  ASSERT_EQ(requests.size(), 2u);
  const std::string& range = requests[1].headers["range"];
  ASSERT_EQ(range.rfind("bytes=", 0), 0u) << range;
  EXPECT_GE(std::stoul(range.substr(6)), 5u) << range;  // not from the start
  EXPECT_LT(std::stoul(range.substr(6)), kBody.size()) << range;
}

TEST(HttpStoreTest, ThrottlingIsRetriedBeyondMaxAttempts) {
  std::atomic<int> calls{0};
  LocalHttpServer server([&](const ServerRequest& r) {
    if (calls++ < 4) return ServerResponse{429, {{"Retry-After", "0"}}, ""};
    return Serve(r, true);
  });
  auto store =
      MakeHttpStore({.origin = server.base_url(),
                     .http = std::make_shared<http::Client>(),
                     .retry = RetryPolicy{.max_attempts = 2,
                                          .base_delay = std::chrono::milliseconds(1),
                                          .throttle_max_delay = std::chrono::milliseconds(5)}});
  auto got = store->ReadAll("files/data.bin?v=1");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, kBody);
  EXPECT_EQ(calls.load(), 5);
}

TEST(HttpStoreTest, ServerErrorsStillGiveUpAfterMaxAttempts) {
  std::atomic<int> calls{0};
  LocalHttpServer server([&](const ServerRequest&) {
    ++calls;
    return ServerResponse{500, {}, ""};
  });
  auto store = MakeHttpStore(
      {.origin = server.base_url(),
       .http = std::make_shared<http::Client>(),
       .retry = RetryPolicy{.max_attempts = 2, .base_delay = std::chrono::milliseconds(1)}});
  auto got = store->ReadAll("files/data.bin?v=1");
  EXPECT_EQ(got.status().code(), StatusCode::kUnavailable);
  EXPECT_FALSE(IsThrottled(got.status()));
  EXPECT_EQ(calls.load(), 2);
}

}  // namespace
}  // namespace ferry::storage
