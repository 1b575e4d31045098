#include "storage/s3/s3_client.h"

#include <gtest/gtest.h>

namespace ferry::storage::s3 {
namespace {

http::Response Answer(long status, std::string code, http::Headers headers = {}) {
  std::string body;
  if (!code.empty()) {
    body = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>" + code +
           "</Code><Message>m</Message><RequestId>rid</RequestId></Error>";
  }
  return http::Response{.status = status, .headers = std::move(headers), .body = std::move(body)};
}

Status Map(const http::Response& r) {
  return S3ErrorToStatus(S3Call{.op = "GetObject", .key = "k"}, "s3://b/k", r);
}

TEST(S3ErrorToStatusTest, SlowDownIsThrottling) {
  Status s = Map(Answer(503, "SlowDown"));
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_TRUE(IsThrottled(s));
  EXPECT_EQ(s.detail().remote_code, "SlowDown");
  EXPECT_EQ(s.message(), "GetObject 's3://b/k' failed: HTTP 503 SlowDown: m [request id rid]");
}

TEST(S3ErrorToStatusTest, TooManyRequestsAndThrottlingCodesAreThrottling) {
  EXPECT_TRUE(IsThrottled(Map(Answer(429, ""))));
  EXPECT_TRUE(IsThrottled(Map(Answer(503, ""))));  // a HEAD answer has no body
  for (const char* code : {"Throttling", "ThrottlingException", "RequestLimitExceeded",
                           "RequestThrottled", "TooManyRequestsException"}) {
    Status s = Map(Answer(400, code));
    EXPECT_EQ(s.code(), StatusCode::kUnavailable) << code;
    EXPECT_TRUE(IsThrottled(s)) << code;
  }
}

TEST(S3ErrorToStatusTest, RetryAfterRidesAlong) {
  Status s = Map(Answer(503, "SlowDown", {{"retry-after", "5"}}));
  EXPECT_EQ(s.detail().retry_after, std::chrono::seconds(5));
  EXPECT_EQ(Map(Answer(503, "SlowDown")).detail().retry_after, std::chrono::milliseconds(0));
}

TEST(S3ErrorToStatusTest, ABodyDamagedOnTheWayIsSentAgain) {
  for (const char* code : {"BadDigest", "XAmzContentSHA256Mismatch"}) {
    Status s = Map(Answer(400, code));
    EXPECT_TRUE(IsRetryable(s)) << code;
    EXPECT_FALSE(IsThrottled(s)) << code;
  }
  EXPECT_FALSE(IsRetryable(Map(Answer(400, "InvalidDigest"))));  // a malformed header: ours
}

TEST(S3ErrorToStatusTest, OtherErrorsAreNotThrottling) {
  Status internal = Map(Answer(500, "InternalError"));
  EXPECT_TRUE(IsRetryable(internal));
  EXPECT_FALSE(IsThrottled(internal));
  EXPECT_FALSE(IsThrottled(Map(Answer(400, "RequestTimeout"))));
  EXPECT_TRUE(IsRetryable(Map(Answer(400, "RequestTimeout"))));
  EXPECT_EQ(Map(Answer(403, "AccessDenied")).code(), StatusCode::kPermissionDenied);
  EXPECT_FALSE(IsThrottled(Map(Answer(403, "AccessDenied"))));
  EXPECT_EQ(Map(Answer(501, "NotImplemented")).code(), StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace ferry::storage::s3
