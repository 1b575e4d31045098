#include "http/http_client.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "base/time_format.h"
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

TEST(HttpClientTest, SendsABodyOfPiecesInOrder) {
  LocalHttpServer server([](const ServerRequest& r) { return ServerResponse{200, {}, r.body}; });
  Client client;
  std::string big(3 << 20, 'x');  // more than one of curl's 1 MiB upload buffers
  big[12345] = 'y';
  http::Request req{.method = "PUT", .url = server.base_url() + "/k", .send_body = true};
  req.body_pieces = {"head;", "", big, "\r\n", "0;", "\r\n"};
  auto resp = client.Send(req);
  ASSERT_TRUE(resp.ok()) << resp.status().ToString();
  EXPECT_EQ(resp->body, "head;" + big + "\r\n0;\r\n");
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

ServerResponse Trickling(size_t size, size_t fast_bytes) {
  ServerResponse r{200, {}, std::string(size, 'x')};
  r.trickle_after = fast_bytes;
  r.trickle_interval = std::chrono::milliseconds(100);  // 10 bytes/s
  return r;
}

TEST(HttpClientTest, TrickledDataTransferIsAbortedAsStalled) {
  LocalHttpServer server([](const ServerRequest&) { return Trickling(64 * 1024, 1000); });
  Client client(ClientOptions{.low_speed_time = std::chrono::seconds(1)});
  std::string got;
  auto start = std::chrono::steady_clock::now();
  auto resp = client.Send({.url = server.base_url() + "/k", .data_transfer = true},
                          [&](std::string_view c) {
                            got += c;
                            return Status();
                          });
  auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(resp.ok());
  EXPECT_EQ(resp.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_TRUE(resp.status().detail().stalled);
  EXPECT_TRUE(IsRetryable(resp.status()));
  EXPECT_EQ(resp.status().message(), "stalled (under 1 KiB/s for 1 s)");
  EXPECT_GE(got.size(), 1000u);
  EXPECT_LT(took, std::chrono::seconds(5));
}

TEST(HttpClientTest, OtherRequestsKeepOnlyTheOneBytePerSecondRule) {
  // CompleteMultipartUpload and CopyObject answer in a trickle of keep-alive whitespace while
  // the server works: requests not marked data_transfer must survive that.
  LocalHttpServer server([](const ServerRequest&) { return Trickling(1020, 1000); });
  Client client(ClientOptions{.low_speed_time = std::chrono::seconds(1)});
  auto resp = client.Send({.method = "POST", .url = server.base_url() + "/k", .send_body = true});
  ASSERT_TRUE(resp.ok()) << resp.status().ToString();
  EXPECT_EQ(resp->body.size(), 1020u);
}

TEST(HttpClientTest, SlowSinkIsNotAStall) {
  // The consumer holds the transfer for longer than the window; the network is fine.
  LocalHttpServer server([](const ServerRequest&) {
    return ServerResponse{200, {}, std::string(4 << 20, 'x')};
  });
  Client client(ClientOptions{.low_speed_time = std::chrono::seconds(1)});
  size_t got = 0;
  int slow_chunks = 0;
  auto resp = client.Send({.url = server.base_url() + "/k", .data_transfer = true},
                          [&](std::string_view c) {
                            if (slow_chunks++ < 6) {
                              std::this_thread::sleep_for(std::chrono::milliseconds(300));
                            }
                            got += c.size();
                            return Status();
                          });
  ASSERT_TRUE(resp.ok()) << resp.status().ToString();
  EXPECT_EQ(got, 4u << 20);
}

TEST(HttpClientTest, RetryAfterTakesSecondsOrADate) {
  auto now = ParseHttpDate("Fri, 24 May 2013 00:00:00 GMT").value();
  Response r{.status = 503, .headers = {{"retry-after", "7"}}};
  EXPECT_EQ(RetryAfter(r, now), std::chrono::seconds(7));
  r.headers = {{"retry-after", "Fri, 24 May 2013 00:00:30 GMT"}};
  EXPECT_EQ(RetryAfter(r, now), std::chrono::seconds(30));
  r.headers = {{"retry-after", "Thu, 23 May 2013 00:00:00 GMT"}};
  EXPECT_EQ(RetryAfter(r, now), std::chrono::seconds(0));
  r.headers = {{"retry-after", "soon"}};
  EXPECT_FALSE(RetryAfter(r, now).has_value());
  r.headers = {};
  EXPECT_FALSE(RetryAfter(r, now).has_value());
}

TEST(HttpClientTest, FormatSpeed) {
  EXPECT_EQ(FormatSpeed(1024), "1 KiB/s");
  EXPECT_EQ(FormatSpeed(500), "500 B/s");
  EXPECT_EQ(FormatSpeed(3 << 20), "3 MiB/s");
  EXPECT_EQ(FormatSpeed(1536), "1536 B/s");
}

TEST(HttpClientTest, DisplayUrlDropsQueryAndUserinfo) {
  EXPECT_EQ(DisplayUrl("https://u:p@h/k?X-Amz-Signature=s"), "https://h/k");
}

}  // namespace
}  // namespace ferry::http
