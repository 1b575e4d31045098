#include "http/http_client.h"

#include <gtest/gtest.h>

#include "http/testing/local_http_server.h"

namespace ferry::http {
namespace {

using testing::LocalHttpServer;
using testing::ServerRequest;
using testing::ServerResponse;

TEST(HttpClientTest, StreamsSuccessfulBodyToSink) {
  LocalHttpServer server([](const ServerRequest& r) {
    return ServerResponse{200, {{"ETag", "\"abc\""}}, "hello " + r.target};
  });
  Client client;
  std::string got;
  auto resp =
      client.Send({.method = "GET", .url = server.base_url() + "/x?y=1"}, [&](std::string_view c) {
        got += c;
        return Status();
      });
  ASSERT_TRUE(resp.ok()) << resp.status().ToString();
  EXPECT_EQ(resp->status, 200);
  EXPECT_EQ(got, "hello /x?y=1");
  EXPECT_EQ(resp->Header("etag"), "\"abc\"");
}

TEST(HttpClientTest, ErrorBodiesAreReturnedNotStreamed) {
  LocalHttpServer server([](const ServerRequest&) {
    return ServerResponse{404, {}, "<Error><Code>NoSuchKey</Code></Error>"};
  });
  Client client;
  bool sink_called = false;
  auto resp = client.Send({.url = server.base_url() + "/k"}, [&](std::string_view) {
    sink_called = true;
    return Status();
  });
  ASSERT_TRUE(resp.ok());
  EXPECT_EQ(resp->status, 404);
  EXPECT_FALSE(sink_called);
  EXPECT_NE(resp->body.find("NoSuchKey"), std::string::npos);
}

TEST(HttpClientTest, SendsBodies) {
  LocalHttpServer server([](const ServerRequest& r) {
    return ServerResponse{200, {}, r.method + ":" + r.body};
  });
  Client client;
  auto resp = client.Send(
      {.method = "PUT", .url = server.base_url() + "/k", .body = "data", .send_body = true});
  ASSERT_TRUE(resp.ok());
  EXPECT_EQ(resp->body, "PUT:data");
  resp = client.Send(
      {.method = "POST", .url = server.base_url() + "/k", .body = "", .send_body = true});
  ASSERT_TRUE(resp.ok());
  EXPECT_EQ(resp->body, "POST:");
}

TEST(HttpClientTest, SinkErrorAbortsTransfer) {
  LocalHttpServer server([](const ServerRequest&) {
    return ServerResponse{200, {}, std::string(1 << 20, 'x')};
  });
  Client client;
  auto resp = client.Send({.url = server.base_url() + "/k"}, [](std::string_view) {
    return Status(StatusCode::kResourceExhausted, "disk full");
  });
  EXPECT_EQ(resp.status().code(), StatusCode::kResourceExhausted);
}

TEST(HttpClientTest, RefusedConnectionIsRetryableUnavailable) {
  Client client;
  auto resp = client.Send({.url = "http://127.0.0.1:1/"});
  EXPECT_EQ(resp.status().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(IsRetryable(resp.status()));
}

TEST(HttpClientTest, TracedRequestLinesHideQueryValuesButS3Parameters) {
  EXPECT_EQ(RedactRequestLine("GET /model.bin?sig=abc&token=x HTTP/1.1"),
            "GET /model.bin?sig=[REDACTED]&token=[REDACTED] HTTP/1.1");
  EXPECT_EQ(RedactRequestLine("PUT /b/k?partNumber=3&uploadId=2~x HTTP/1.1"),
            "PUT /b/k?partNumber=3&uploadId=2~x HTTP/1.1");
  EXPECT_EQ(RedactRequestLine("POST /b?delete HTTP/1.1"), "POST /b?delete HTTP/1.1");
  EXPECT_EQ(RedactRequestLine("Host: h"), "Host: h");
}

TEST(HttpClientTest, DisplayUrlDropsQueryAndUserinfo) {
  EXPECT_EQ(DisplayUrl("https://u:p@h/k?X-Amz-Signature=s"), "https://h/k");
}

}  // namespace
}  // namespace ferry::http
