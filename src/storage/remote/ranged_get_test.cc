// The resumable ranged GET shared by the s3 and http(s) stores, against scripted answers.
#include "storage/remote/ranged_get.h"

#include <gtest/gtest.h>

#include <deque>
#include <map>

namespace ferry::storage::remote {
namespace {

const std::string kBody = "0123456789abcdefghij";

// One scripted answer: status, headers, body, and how many body bytes arrive before the
// connection breaks (npos = all).
struct Answer {
  long status = 200;
  http::Headers headers;
  std::string body;
  size_t break_after = std::string::npos;
  Status error;  // an error answer (already mapped, as the backends do) instead of a body
};

Answer Ok(std::string etag, std::string body = kBody) {
  return {.status = 200, .headers = {{"etag", etag}}, .body = std::move(body)};
}
// A 200 answer whose connection breaks after `after` bytes.
Answer BrokenOk(std::string etag, size_t after) {
  Answer a = Ok(std::move(etag));
  a.break_after = after;
  return a;
}
Answer Partial(std::string etag, uint64_t from, uint64_t to_excl, uint64_t total = kBody.size()) {
  return {
      .status = 206,
      .headers = {{"etag", etag},
                  {"content-range", "bytes " + std::to_string(from) + "-" +
                                        std::to_string(to_excl - 1) + "/" + std::to_string(total)}},
      .body = kBody.substr(from, to_excl - from)};
}
Answer Error(StatusCode code, int http_status) {
  return {.error = Status(code, "HTTP " + std::to_string(http_status),
                          ErrorDetail{.http_status = http_status})};
}

// Plays the answers in order and records the headers of every request.
struct Script {
  std::deque<Answer> answers;
  std::vector<std::map<std::string, std::string>> requests;
  int size_asked = 0;

  RangedGet Get() {
    return RangedGet{
        .op = "GET",
        .url = "http://h/k",
        .key = "k",
        .attempt = [this](const http::Headers& headers, const http::BodySink& sink,
                          const http::ResponseStart& on_start) -> Result<http::Response> {
          std::map<std::string, std::string> seen;
          for (const auto& h : headers) seen[h.name] = h.value;
          requests.push_back(seen);
          Answer a = answers.front();
          answers.pop_front();
          if (!a.error.ok()) return a.error;
          http::Response r{.status = a.status, .headers = a.headers};
          r.headers.push_back({"content-length", std::to_string(a.body.size())});
          FERRY_RETURN_IF_ERROR(on_start(r));
          std::string_view body = a.body;
          bool broken = a.break_after < body.size();
          if (broken) body = body.substr(0, a.break_after);
          if (!body.empty()) FERRY_RETURN_IF_ERROR(sink(body));
          if (broken) return Unavailable("connection reset");
          return r;
        },
        .current_size = [this]() -> Result<uint64_t> {
          ++size_asked;
          return kBody.size();
        },
        .retry = RetryPolicy{.base_delay = std::chrono::milliseconds(0),
                             .max_delay = std::chrono::milliseconds(0)}};
  }
  // Reads through `get` (default: Get()); `delivered` receives what reached the sink even when
  // the read failed.
  Result<std::string> Read(const ReadOptions& options = {}, std::optional<RangedGet> get = {},
                           std::string* delivered = nullptr) {
    std::string out;
    Status s = ReadRanged(get ? *get : Get(), options, [&](std::string_view c) {
      out.append(c);
      return Status();
    });
    if (delivered) *delivered = out;
    if (!s.ok()) return s;
    return out;
  }
};

TEST(RangedGetTest, BrokenTransferResumesFromTheFirstUndeliveredBytePinnedToTheFirstEtag) {
  Script s;
  Answer first = BrokenOk("\"e1\"", 5);
  s.answers = {first, Partial("\"e1\"", 5, 20)};
  EXPECT_EQ(*s.Read(), kBody);
  ASSERT_EQ(s.requests.size(), 2u);
  EXPECT_FALSE(s.requests[0].contains("Range"));
  EXPECT_FALSE(s.requests[0].contains("If-Match"));
  EXPECT_EQ(s.requests[1]["Range"], "bytes=5-");
  // Before, the ETag was taken only from a completed answer: the resume went unpinned.
  EXPECT_EQ(s.requests[1]["If-Match"], "\"e1\"");
}

TEST(RangedGetTest, ObjectReplacedDuringAResumeIsNeverSpliced) {
  Script s;
  Answer first = BrokenOk("\"e1\"", 5);
  s.answers = {first, Error(StatusCode::kFailedPrecondition, 412)};
  auto got = s.Read();
  EXPECT_EQ(got.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(got.status().message(), "GET 'http://h/k': object was replaced while reading");
}

TEST(RangedGetTest, ServerIgnoringIfMatchCannotSpliceAnotherVersion) {
  Script s;
  Answer first = BrokenOk("\"e1\"", 5);
  s.answers = {first, Partial("\"e2\"", 5, 20)};
  std::string out;
  EXPECT_EQ(s.Read({}, std::nullopt, &out).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(out, "01234");  // nothing of the other version was delivered
}

TEST(RangedGetTest, ServerAnswering200ToARangeHasTheLeadingBytesSkipped) {
  Script s;
  s.answers = {Ok("\"e1\"")};
  EXPECT_EQ(*s.Read({.range = ByteRange{5, 3}}), "567");
  EXPECT_EQ(s.requests[0]["Range"], "bytes=5-7");
  // ... also on a resume after a broken 206.
  Answer first = Partial("\"e1\"", 2, 20);
  first.break_after = 3;
  s.answers = {first, Ok("\"e1\"")};
  EXPECT_EQ(*s.Read({.range = ByteRange{2, std::nullopt}}), kBody.substr(2));
  EXPECT_EQ(s.requests.back()["Range"], "bytes=5-");
}

TEST(RangedGetTest, AnswerStartingElsewhereThanAskedIsAnError) {
  Script s;
  s.answers = {Partial("\"e1\"", 0, 20)};
  EXPECT_EQ(s.Read({.range = ByteRange{5, std::nullopt}}).status().code(), StatusCode::kInternal);
}

TEST(RangedGetTest, RangeAtTheEndIsEmptyAndPastTheEndIsOutOfRange) {
  Script s;
  s.answers = {Error(StatusCode::kOutOfRange, 416)};
  EXPECT_EQ(*s.Read({.range = ByteRange{20, std::nullopt}}), "");
  EXPECT_EQ(s.size_asked, 1);
  s.answers = {Error(StatusCode::kOutOfRange, 416)};
  EXPECT_EQ(s.Read({.range = ByteRange{21, std::nullopt}}).status().code(),
            StatusCode::kOutOfRange);
}

TEST(RangedGetTest, ZeroLengthRangeSendsNothing) {
  Script s;
  EXPECT_EQ(*s.Read({.range = ByteRange{3, 0}}), "");
  EXPECT_TRUE(s.requests.empty());
}

TEST(RangedGetTest, CallersIfMatchIsSentQuotedAndItsFailureKeptAsMapped) {
  Script s;
  s.answers = {Error(StatusCode::kFailedPrecondition, 412)};
  auto got = s.Read({.if_match = "e0"});
  EXPECT_EQ(s.requests[0]["If-Match"], "\"e0\"");
  EXPECT_EQ(got.status().message(), "HTTP 412");
}

TEST(RangedGetTest, OtherPreconditionFailuresAreNotCalledReplacements) {
  // S3 answers 301 (another region) as kFailedPrecondition: not an object replaced.
  Script s;
  Answer first = BrokenOk("\"e1\"", 5);
  s.answers = {first, Error(StatusCode::kFailedPrecondition, 301)};
  EXPECT_EQ(s.Read().status().message(), "HTTP 301");
}

TEST(RangedGetTest, WeakEtagsAreComparedButNeverSentAsIfMatch) {
  Script s;
  Answer first = BrokenOk("W/\"w1\"", 5);
  s.answers = {first, Partial("W/\"w1\"", 5, 20)};
  EXPECT_EQ(*s.Read(), kBody);
  EXPECT_FALSE(s.requests[1].contains("If-Match"));
  s.answers = {first, Partial("W/\"w2\"", 5, 20)};
  EXPECT_EQ(s.Read().status().code(), StatusCode::kFailedPrecondition);
}

TEST(RangedGetTest, InfoComesFromTheFirstAnswer) {
  Script s;
  Answer a = Partial("\"e1\"", 4, 8);
  a.headers.push_back({"last-modified", "Fri, 24 May 2013 00:00:00 GMT"});
  a.headers.push_back({"x-amz-meta-ferry-crc32c", "01020304"});
  s.answers = {a};
  RangedGet get = s.Get();
  get.more_info = [](const http::Response& r, ObjectInfo& info) {
    info.metadata["crc"] = std::string(*r.Header("x-amz-meta-ferry-crc32c"));
  };
  ObjectInfo info;
  EXPECT_EQ(*s.Read({.range = ByteRange{4, 4}, .info = &info}, get), "4567");
  EXPECT_EQ(info.key, "k");
  EXPECT_EQ(info.size, 20u);  // the total after Content-Range's '/', not the range's length
  EXPECT_EQ(info.etag, "e1");
  EXPECT_TRUE(info.modified.has_value());
  EXPECT_EQ(info.metadata["crc"], "01020304");
}

TEST(RangedGetTest, EtagsLoseTheirQuotesButWeakOnesStayWeak) {
  EXPECT_EQ(EtagFromHeader("\"abc\""), "abc");
  EXPECT_EQ(EtagFromHeader("abc"), "abc");
  EXPECT_EQ(EtagFromHeader("W/\"abc\""), "W/\"abc\"");
  EXPECT_EQ(EtagFromHeader("\""), "\"");
}

}  // namespace
}  // namespace ferry::storage::remote
