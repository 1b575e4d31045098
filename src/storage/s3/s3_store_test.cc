// The S3 store's reads against a loopback HTTP server: the behaviour it shares with the http(s)
// store (storage/remote/ranged_get.h), seen through S3 requests.
#include "storage/s3/s3_store.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <string>

#include "aws/credentials.h"
#include "base/hash.h"
#include "base/strings.h"
#include "http/http_client.h"
#include "http/testing/local_http_server.h"

namespace ferry::storage {
namespace {

using http::testing::LocalHttpServer;
using http::testing::ServerRequest;
using http::testing::ServerResponse;

const std::string kBody = "0123456789abcdefghij";

ServerResponse Object(const ServerRequest& r, bool honour_range) {
  if (r.target != "/bucket/data.bin") return ServerResponse{404, {}, ""};
  return http::testing::ServeBody(
      r, kBody, {{"ETag", "\"0123abcd\""}, {"x-amz-meta-ferry-crc32c", "00c0ffee"}}, honour_range);
}

// Options for a store on `server` (bucket "bucket", path-style, static credentials).
S3StoreOptions OptionsFor(const LocalHttpServer& server,
                          std::chrono::seconds low_speed_time = std::chrono::seconds(30)) {
  return S3StoreOptions{
      .bucket = "bucket",
      .endpoint = {.scheme = "http",
                   .authority = "127.0.0.1:" + std::to_string(server.port()),
                   .region = "us-east-1",
                   .path_style = true,
                   .custom = true},
      .credentials = std::make_shared<aws::StaticCredentialsProvider>(
          aws::Credentials{.access_key_id = "AKIDEXAMPLE", .secret_access_key = "s3cr3t"}),
      .http = std::make_shared<http::Client>(http::ClientOptions{.low_speed_time = low_speed_time}),
      .retry = RetryPolicy{.base_delay = std::chrono::milliseconds(1)}};
}

std::shared_ptr<Store> Make(const LocalHttpServer& server,
                            std::chrono::seconds low_speed_time = std::chrono::seconds(30)) {
  return MakeS3Store(OptionsFor(server, low_speed_time));
}

TEST(S3StoreReadTest, ServerAnswering200ToARangeStillGivesTheRightBytes) {
  // A proxy or an S3-compatible server that ignores Range: S3 reads used to deliver the object
  // from byte 0 here (the http(s) store already skipped).
  LocalHttpServer server([](const ServerRequest& r) { return Object(r, false); });
  auto store = Make(server);
  EXPECT_EQ(*store->ReadAll("data.bin", {.range = ByteRange{5, 3}}), "567");
  EXPECT_EQ(*store->ReadAll("data.bin", {.range = ByteRange{15, std::nullopt}}), "fghij");
}

TEST(S3StoreReadTest, InfoAndEtagFromTheAnswer) {
  LocalHttpServer server([](const ServerRequest& r) { return Object(r, true); });
  auto store = Make(server);
  ObjectInfo info;
  EXPECT_EQ(*store->ReadAll("data.bin", {.range = ByteRange{2, 2}, .info = &info}), "23");
  EXPECT_EQ(info.size, kBody.size());
  EXPECT_EQ(info.etag, "0123abcd");
  EXPECT_EQ(info.metadata["ferry-crc32c"], "00c0ffee");
  EXPECT_EQ(store->Stat("data.bin")->etag, "0123abcd");
}

TEST(S3StoreReadTest, StalledReadResumesPinnedToTheFirstAnswersEtag) {
  std::atomic<int> gets{0};
  LocalHttpServer server([&](const ServerRequest& r) {
    ServerResponse resp = Object(r, true);
    if (gets++ == 0) {  // the first answer trickles after 5 bytes
      resp.trickle_after = 5;
      resp.trickle_interval = std::chrono::milliseconds(200);
    }
    return resp;
  });
  auto store = Make(server, std::chrono::seconds(1));
  auto got = store->ReadAll("data.bin");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, kBody);
  auto requests = server.requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[1].headers["if-match"], "\"0123abcd\"");
  EXPECT_NE(requests[1].headers["range"], "bytes=0-");
}

// How an upload's body is made verifiable by the server (S3StoreOptions::body_check).
struct SentPut {
  std::map<std::string, std::string> headers;
  std::string body;
};

SentPut PutThrough(S3StoreOptions::BodyCheck check, bool anonymous) {
  SentPut sent;
  std::mutex mu;
  LocalHttpServer server([&](const ServerRequest& r) {
    std::lock_guard lock(mu);
    if (r.method == "PUT") sent = {r.headers, r.body};
    return ServerResponse{200, {{"ETag", "\"e\""}}, ""};
  });
  S3StoreOptions options = OptionsFor(server);
  options.credentials = std::make_shared<aws::StaticCredentialsProvider>(aws::Credentials{
      .access_key_id = "AKIDEXAMPLE", .secret_access_key = "s3cr3t", .anonymous = anonymous});
  options.body_check = check;
  auto store = MakeS3Store(std::move(options));
  EXPECT_TRUE(store->WriteAll("k", "the body").ok());
  std::lock_guard lock(mu);
  return sent;
}

// S3 keys are UTF-8: a name in another encoding is refused before any request, with the reason.
TEST(S3StoreWriteTest, NamesThatAreNotUtf8AreRefusedWithTheReason) {
  std::atomic<int> requests{0};
  LocalHttpServer server([&](const ServerRequest&) {
    ++requests;
    return ServerResponse{200, {{"ETag", "\"e\""}}, ""};
  });
  auto store = MakeS3Store(OptionsFor(server));
  for (auto status :
       {store->WriteAll("caf\xe9.txt", "x").status(), store->NewWriter("caf\xe9.txt", {}).status(),
        store->NewPartWriter("caf\xe9.txt", {.size = 10, .part_size = 5}).status()}) {
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(status.message().find("not UTF-8"), std::string::npos) << status.message();
  }
  EXPECT_EQ(requests.load(), 0);
  EXPECT_TRUE(store->WriteAll("caf\xc3\xa9.txt", "x").ok());  // UTF-8 é
}

TEST(S3StoreWriteTest, Sha256CheckSignsTheBodyAndSendsNoMd5) {
  SentPut p = PutThrough(S3StoreOptions::BodyCheck::kSha256, false);
  EXPECT_EQ(p.body, "the body");
  EXPECT_EQ(p.headers["x-amz-content-sha256"], Sha256Hex("the body"));
  EXPECT_FALSE(p.headers.contains("content-md5"));
}

TEST(S3StoreWriteTest, Md5CheckSendsContentMd5AndAnUnsignedPayload) {
  SentPut p = PutThrough(S3StoreOptions::BodyCheck::kMd5, false);
  EXPECT_EQ(p.headers["content-md5"], Base64Encode(Md5("the body")));
  EXPECT_EQ(p.headers["x-amz-content-sha256"], "UNSIGNED-PAYLOAD");
}

TEST(S3StoreWriteTest, AnonymousRequestsAlwaysCarryContentMd5) {
  SentPut p = PutThrough(S3StoreOptions::BodyCheck::kSha256, true);
  EXPECT_EQ(p.headers["content-md5"], Base64Encode(Md5("the body")));
  EXPECT_FALSE(p.headers.contains("x-amz-content-sha256"));
  EXPECT_FALSE(p.headers.contains("authorization"));
}

// An aws-chunked body decoded: the payload, and each chunk's size; "" payload when malformed.
std::pair<std::string, std::vector<size_t>> DecodeChunked(std::string_view body) {
  std::string out;
  std::vector<size_t> sizes;
  while (true) {
    size_t semi = body.find(";chunk-signature=");
    size_t eol = body.find("\r\n");
    if (semi == std::string_view::npos || eol != semi + 17 + 64) return {"", {}};
    size_t len = std::stoul(std::string(body.substr(0, semi)), nullptr, 16);
    body.remove_prefix(eol + 2);
    if (body.size() < len + 2 || body.substr(len, 2) != "\r\n") return {"", {}};
    sizes.push_back(len);
    out += body.substr(0, len);
    body.remove_prefix(len + 2);
    if (len == 0) return {body.empty() ? out : "", sizes};
  }
}

// A part written through a server that records the part's request; `refuse` answers the first
// aws-chunked part with 501 NotImplemented, as a server without chunked uploads would.
// With `digest`, the part goes through WritePartWithSha256 with it; `wants` gets the writer's
// wants_sha256().
std::vector<SentPut> PartThrough(S3StoreOptions::BodyCheck check, const std::string& data,
                                 bool refuse, const Sha256Digest* digest = nullptr,
                                 bool* wants = nullptr) {
  std::vector<SentPut> parts;
  std::mutex mu;
  LocalHttpServer server([&](const ServerRequest& r) {
    std::lock_guard lock(mu);
    if (r.method == "POST" && r.target.find("uploads") != std::string::npos) {
      return ServerResponse{200,
                            {},
                            "<InitiateMultipartUploadResult><UploadId>u1</UploadId>"
                            "</InitiateMultipartUploadResult>"};
    }
    if (r.method == "PUT") {
      parts.push_back({r.headers, r.body});
      if (refuse && r.headers.contains("x-amz-decoded-content-length")) {
        return ServerResponse{501, {}, "<Error><Code>NotImplemented</Code></Error>"};
      }
    }
    return ServerResponse{200, {{"ETag", "\"e\""}}, ""};
  });
  S3StoreOptions options = OptionsFor(server);
  options.body_check = check;
  auto store = MakeS3Store(std::move(options));
  auto w = store->NewPartWriter("k", {.size = data.size(), .part_size = 5ull << 20});
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  if (w.ok()) {
    if (wants) *wants = (*w)->wants_sha256();
    Status st = digest ? (*w)->WritePartWithSha256(1, data, *digest) : (*w)->WritePart(1, data);
    EXPECT_TRUE(st.ok()) << st.ToString();
  }
  std::lock_guard lock(mu);
  return parts;
}

TEST(S3StoreWriteTest, ChunkedCheckSendsAPartInSignedChunks) {
  std::string data(200'000, 'p');
  data[140'000] = 'q';
  auto parts = PartThrough(S3StoreOptions::BodyCheck::kChunked, data, false);
  ASSERT_EQ(parts.size(), 1u);
  auto& h = parts[0].headers;
  EXPECT_EQ(h["x-amz-content-sha256"], "STREAMING-AWS4-HMAC-SHA256-PAYLOAD");
  EXPECT_EQ(h["content-encoding"], "aws-chunked");
  EXPECT_EQ(h["x-amz-decoded-content-length"], "200000");
  EXPECT_EQ(h["content-length"], std::to_string(parts[0].body.size()));
  EXPECT_NE(h["authorization"].find("content-encoding;content-length;host;"), std::string::npos)
      << h["authorization"];
  auto [payload, sizes] = DecodeChunked(parts[0].body);
  EXPECT_EQ(payload, data);
  EXPECT_EQ(sizes, (std::vector<size_t>{65534, 65534, 65534, 3398, 0}));
}

// A part whose SHA-256 the caller computed (the copy engine hashes four at a time) is sent with
// that digest, not hashed again; only signed SHA-256 payloads ask for it.
TEST(S3StoreWriteTest, APartSentWithItsPrecomputedSha256) {
  std::string data(40'000, 's');
  const Sha256Digest given = Sha256("what the caller hashed");
  bool wants = false;
  auto parts = PartThrough(S3StoreOptions::BodyCheck::kSha256, data, false, &given, &wants);
  EXPECT_TRUE(wants);
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(parts[0].headers["x-amz-content-sha256"], HexEncode(given));
  EXPECT_EQ(parts[0].body, data);
  PartThrough(S3StoreOptions::BodyCheck::kMd5, data, false, nullptr, &wants);
  EXPECT_FALSE(wants);
  PartThrough(S3StoreOptions::BodyCheck::kChunked, data, false, nullptr, &wants);
  EXPECT_FALSE(wants);
}

TEST(S3StoreWriteTest, AServerRefusingChunkedBodiesGetsSignedSha256Parts) {
  std::string data(40'000, 'r');
  auto parts = PartThrough(S3StoreOptions::BodyCheck::kChunked, data, true);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_TRUE(parts[0].headers.contains("x-amz-decoded-content-length"));
  EXPECT_EQ(parts[1].headers["x-amz-content-sha256"], Sha256Hex(data));
  EXPECT_FALSE(parts[1].headers.contains("content-encoding"));
  EXPECT_EQ(parts[1].body, data);
}

}  // namespace
}  // namespace ferry::storage
