#include "storage/web/http_store.h"

#include <gtest/gtest.h>

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
  ServerResponse resp{
      200, {{"ETag", "\"v1\""}, {"Last-Modified", "Fri, 24 May 2013 00:00:00 GMT"}}, kBody};
  auto it = r.headers.find("range");
  if (honour_range && it != r.headers.end()) {
    size_t from = std::stoul(it->second.substr(6));
    size_t dash = it->second.find('-');
    size_t to =
        dash + 1 < it->second.size() ? std::stoul(it->second.substr(dash + 1)) : kBody.size() - 1;
    if (from >= kBody.size()) return ServerResponse{416, {}, ""};
    resp.status = 206;
    resp.body = kBody.substr(from, std::min(to, kBody.size() - 1) - from + 1);
  }
  return resp;
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

TEST(HttpStoreTest, IsReadOnly) {
  LocalHttpServer server([](const ServerRequest& r) { return Serve(r, true); });
  auto store = Make(server);
  EXPECT_EQ(store->WriteAll("x", "y").status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(store->Delete("x").code(), StatusCode::kUnimplemented);
  EXPECT_NE(store->List({}).status().message().find("read-only"), std::string::npos);
}

}  // namespace
}  // namespace ferry::storage
