#include "server/router.h"

#include <gtest/gtest.h>

namespace ferry::server {
namespace {

Request Req(std::string method, std::string path) {
  Request r;
  r.method = std::move(method);
  r.path = std::move(path);
  return r;
}

Response Echo(const Request& req) {
  std::string out = req.method + " " + req.path;
  for (const auto& [k, v] : req.params) out += " " + k + "=" + v;
  return TextResponse(200, out);
}

struct Deps {
  int calls = 0;
};

Response Counting(const Request&, Deps& deps) {
  ++deps.calls;
  return TextResponse(200, std::to_string(deps.calls));
}

TEST(RouterTest, MatchesLiteralsParamsAndCatchAll) {
  Router r;
  ASSERT_TRUE(r.Add("GET", "/hf/{org}/{name}/resolve/{rev}/{file...}", Echo).ok());
  ASSERT_TRUE(r.Add("GET", "/simple/{project}/", Echo).ok());
  EXPECT_EQ(r.Dispatch(Req("GET", "/hf/o/n/resolve/main/a/b.bin")).body,
            "GET /hf/o/n/resolve/main/a/b.bin org=o name=n rev=main file=a/b.bin");
  EXPECT_EQ(r.Dispatch(Req("GET", "/hf/o/n/resolve/main/")).body,
            "GET /hf/o/n/resolve/main/ org=o name=n rev=main file=");
  EXPECT_EQ(r.Dispatch(Req("GET", "/simple/numpy/")).body, "GET /simple/numpy/ project=numpy");
  EXPECT_EQ(r.Dispatch(Req("GET", "/simple/numpy")).status, 404);
  EXPECT_EQ(r.Dispatch(Req("GET", "/simple//")).status, 404);  // {name} is never empty
}

TEST(RouterTest, FirstMatchWins) {
  Router r;
  ASSERT_TRUE(
      r.Add("GET", "/a/special", [](const Request&) { return TextResponse(200, "lit"); }).ok());
  ASSERT_TRUE(r.Add("GET", "/a/{x}", Echo).ok());
  EXPECT_EQ(r.Dispatch(Req("GET", "/a/special")).body, "lit");
  EXPECT_EQ(r.Dispatch(Req("GET", "/a/other")).body, "GET /a/other x=other");
}

TEST(RouterTest, UnknownPathIs404WithOneLineJson) {
  Router r;
  Response resp = r.Dispatch(Req("GET", "/nope"));
  EXPECT_EQ(resp.status, 404);
  EXPECT_EQ(resp.headers.Get("content-type"), "application/json");
  EXPECT_EQ(resp.body, "{\"error\":\"no route for /nope\"}\n");
}

TEST(RouterTest, WrongMethodIs405WithAllow) {
  Router r;
  ASSERT_TRUE(r.Add("GET", "/x", Echo).ok());
  ASSERT_TRUE(r.Add("PUT", "/x", Echo).ok());
  Response resp = r.Dispatch(Req("DELETE", "/x"));
  EXPECT_EQ(resp.status, 405);
  EXPECT_EQ(resp.headers.Get("Allow"), "GET, HEAD, PUT");
}

TEST(RouterTest, AFallbackAnswersPathsNoRouteMatchesInAnyMethod) {
  Router r;
  ASSERT_TRUE(r.AddFallback("/api/{rest...}", [](const Request& q) {
                 return TextResponse(
                     404, "fallback " + q.method + " " + std::string(q.Param("rest").value_or("")));
               }).ok());
  ASSERT_TRUE(r.Add("GET", "/api/known", Echo).ok());  // added after it, still wins
  EXPECT_EQ(r.Dispatch(Req("GET", "/api/known")).body, "GET /api/known");
  EXPECT_EQ(r.Dispatch(Req("POST", "/api/known")).status, 405);
  Response other = r.Dispatch(Req("PATCH", "/api/a/b"));
  EXPECT_EQ(other.status, 404);
  EXPECT_EQ(other.body, "fallback PATCH a/b");
  EXPECT_EQ(r.Dispatch(Req("GET", "/elsewhere")).body, "{\"error\":\"no route for /elsewhere\"}\n");
  EXPECT_EQ(r.AccessFor("DELETE", "/api/a"), Access::kRead);
}

TEST(RouterTest, HeadRunsGetUnlessRegistered) {
  Router r;
  ASSERT_TRUE(r.Add("GET", "/g", Echo).ok());
  ASSERT_TRUE(r.Add("GET", "/h", Echo).ok());
  ASSERT_TRUE(r.Add("HEAD", "/h", [](const Request&) { return TextResponse(204, ""); }).ok());
  EXPECT_EQ(r.Dispatch(Req("HEAD", "/g")).body, "HEAD /g");
  EXPECT_EQ(r.Dispatch(Req("HEAD", "/h")).status, 204);
}

TEST(RouterTest, BindsDepsToPlainFunctions) {
  Router r;
  Deps deps;
  ASSERT_TRUE(r.Add("POST", "/count", &Counting, deps).ok());
  r.Dispatch(Req("POST", "/count"));
  EXPECT_EQ(r.Dispatch(Req("POST", "/count")).body, "2");
  EXPECT_EQ(deps.calls, 2);
  EXPECT_TRUE(r.Has("POST", "/count"));
}

TEST(RouterTest, RejectsBadPatterns) {
  Router r;
  EXPECT_FALSE(r.Add("GET", "x", Echo).ok());
  EXPECT_FALSE(r.Add("GET", "/{rest...}/x", Echo).ok());
  EXPECT_FALSE(r.Add("GET", "/{a}/{a}", Echo).ok());
  EXPECT_FALSE(r.Add("GET", "/{}", Echo).ok());
}

TEST(RouterTest, TellsWhichRequestsStreamTheirBody) {
  Router r;
  ASSERT_TRUE(r.Add("GET", "/up/{p...}", Echo).ok());
  ASSERT_TRUE(r.AddStreaming("PUT", "/up/{p...}", Echo).ok());
  ASSERT_TRUE(r.Add("PUT", "/small", Echo).ok());
  EXPECT_TRUE(r.StreamsBody("PUT", "/up/a/b"));
  EXPECT_FALSE(r.StreamsBody("GET", "/up/a/b"));
  EXPECT_FALSE(r.StreamsBody("HEAD", "/up/a/b"));
  EXPECT_FALSE(r.StreamsBody("PUT", "/small"));
  EXPECT_FALSE(r.StreamsBody("PUT", "/nothing"));
  EXPECT_EQ(r.Dispatch(Req("PUT", "/up/x")).status, 200);
  EXPECT_FALSE(r.AddStreaming("PUT", "bad", Echo).ok());
}

TEST(RouterTest, AccessIsByMethodUnlessRegistered) {
  Router r;
  auto ok = [](const Request&) { return TextResponse(200, "x"); };
  ASSERT_TRUE(r.Add("GET", "/a/{x}", ok).ok());
  ASSERT_TRUE(r.Add("POST", "/a/{x}", ok).ok());
  ASSERT_TRUE(r.Add("POST", "/search", Access::kRead, ok).ok());
  ASSERT_TRUE(r.AddStreaming("PUT", "/up/{rest...}", ok).ok());
  EXPECT_EQ(r.AccessFor("GET", "/a/1"), Access::kRead);
  EXPECT_EQ(r.AccessFor("HEAD", "/a/1"), Access::kRead);  // HEAD runs the GET route
  EXPECT_EQ(r.AccessFor("POST", "/a/1"), Access::kWrite);
  EXPECT_EQ(r.AccessFor("POST", "/search"), Access::kRead);
  EXPECT_EQ(r.AccessFor("PUT", "/up/x/y"), Access::kWrite);
  EXPECT_EQ(r.AccessFor("DELETE", "/a/1"), Access::kRead);  // no route: 405, nothing runs
  EXPECT_EQ(DefaultAccess("OPTIONS"), Access::kRead);
  EXPECT_EQ(DefaultAccess("DELETE"), Access::kWrite);
}

}  // namespace
}  // namespace ferry::server
