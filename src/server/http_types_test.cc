#include "server/http_types.h"

#include <gtest/gtest.h>

namespace ferry::server {
namespace {

TEST(HeadersTest, LookupIsCaseInsensitiveAndSetReplaces) {
  Headers h;
  h.Add("Content-Type", "a");
  h.Add("content-type", "b");
  EXPECT_EQ(h.Get("CONTENT-TYPE"), "a");
  h.Set("Content-Type", "c");
  EXPECT_EQ(h.fields().size(), 1u);
  EXPECT_EQ(h.Get("content-type"), "c");
  h.Remove("CONTENT-type");
  EXPECT_FALSE(h.Has("Content-Type"));
}

TEST(ResponseHelpersTest, ErrorIsOneLineJson) {
  Response r = ErrorResponse(400, "bad \"x\"\nsecond line");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.headers.Get("Content-Type"), "application/json");
  EXPECT_EQ(r.body, "{\"error\":\"bad \\\"x\\\" second line\"}\n");
}

TEST(ResponseHelpersTest, StatusMapsToHttp) {
  EXPECT_EQ(HttpStatusFor(NotFound("x")), 404);
  EXPECT_EQ(HttpStatusFor(InvalidArgument("x")), 400);
  EXPECT_EQ(HttpStatusFor(Unavailable("x")), 503);
  EXPECT_EQ(HttpStatusFor(Status(StatusCode::kUnauthenticated, "x")), 401);
  EXPECT_EQ(ErrorResponse(Internal("boom")).status, 500);
  EXPECT_EQ(TextResponse(200, "hi").headers.Get("Content-Type"), "text/plain; charset=utf-8");
}

TEST(RequestTest, QueryAndParamLookup) {
  Request r;
  r.query = {{"a", "1"}, {"a", "2"}};
  r.params = {{"repo", "x"}};
  EXPECT_EQ(r.Query("a"), "1");
  EXPECT_FALSE(r.Query("b"));
  EXPECT_EQ(r.Param("repo"), "x");
}

TEST(StringSourceTest, ReadsThenEnds) {
  auto s = StringSource("hello");
  char buf[3];
  EXPECT_EQ(*s->Read(buf, 3), 3u);
  EXPECT_EQ(*s->Read(buf, 3), 2u);
  EXPECT_EQ(*s->Read(buf, 3), 0u);
}

}  // namespace
}  // namespace ferry::server
