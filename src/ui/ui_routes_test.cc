#include "ui/ui_routes.h"

#include <gtest/gtest.h>

#include "server/path.h"
#include "server/router.h"

namespace ferry::ui {
namespace {

constexpr Asset kFake[] = {
    {"app.js", "\"aa\"", "export {};"},
    {"index.html", "\"ii\"", "<!doctype html>"},
    {"uplot/uPlot.min.css", "\"uu\"", ".u{}"},
};

server::Response Get(const server::Router& router, std::string path, std::string inm = "") {
  server::Request req;
  req.method = "GET";
  req.path = std::move(path);
  if (!inm.empty()) req.headers.Add("If-None-Match", inm);
  return router.Dispatch(std::move(req));
}

struct Fixture {
  UiAssets assets{kFake};
  server::Router router;
  Fixture() {
    EXPECT_TRUE(router.Add("GET", "/", &HandleIndex, assets).ok());
    EXPECT_TRUE(router.Add("GET", "/ui/{path...}", &HandleAsset, assets).ok());
  }
};

TEST(UiRoutesTest, ServesIndexAndAssetsWithTypeEtagAndCacheControl) {
  Fixture f;
  auto index = Get(f.router, "/");
  EXPECT_EQ(index.status, 200);
  EXPECT_EQ(index.body, "<!doctype html>");
  EXPECT_EQ(index.headers.Get("Content-Type"), "text/html; charset=utf-8");
  EXPECT_EQ(index.headers.Get("ETag"), "\"ii\"");
  EXPECT_EQ(index.headers.Get("Cache-Control"), "no-cache");
  auto js = Get(f.router, "/ui/app.js");
  EXPECT_EQ(js.status, 200);
  EXPECT_EQ(js.headers.Get("Content-Type"), "text/javascript; charset=utf-8");
  auto css = Get(f.router, "/ui/uplot/uPlot.min.css");
  EXPECT_EQ(css.body, ".u{}");
  EXPECT_EQ(css.headers.Get("Content-Type"), "text/css; charset=utf-8");
}

TEST(UiRoutesTest, MatchingIfNoneMatchIs304WithoutBody) {
  Fixture f;
  auto r = Get(f.router, "/ui/app.js", "\"aa\"");
  EXPECT_EQ(r.status, 304);
  EXPECT_TRUE(r.body.empty());
  EXPECT_EQ(r.headers.Get("ETag"), "\"aa\"");
  EXPECT_EQ(Get(f.router, "/ui/app.js", "\"other\"").status, 200);
}

TEST(UiRoutesTest, UnknownAndTraversingPathsAreNotServed) {
  Fixture f;
  EXPECT_EQ(Get(f.router, "/ui/nope.js").status, 404);
  EXPECT_EQ(Get(f.router, "/ui/").status, 404);
  EXPECT_EQ(Get(f.router, "/ui/uplot").status, 404);
  // Only names in the table are served; the server rejects dot segments before any handler.
  EXPECT_EQ(Get(f.router, "/ui/../index.html").status, 404);
  EXPECT_FALSE(server::ParseTarget("/ui/../../etc/passwd").ok());
  EXPECT_FALSE(server::ParseTarget("/ui/%2e%2e/x").ok());
}

TEST(UiAssetsTest, EmbeddedFilesAreSortedAndHoldTheAppAndUplot) {
  auto files = EmbeddedAssets();
  for (size_t i = 1; i < files.size(); ++i) EXPECT_LT(files[i - 1].path, files[i].path);
  for (const char* name :
       {"index.html", "app.js", "uplot/uPlot.iife.min.js", "uplot/uPlot.min.css"}) {
    const Asset* a = FindAsset(files, name);
    ASSERT_NE(a, nullptr) << name;
    EXPECT_FALSE(a->data.empty()) << name;
    EXPECT_EQ(a->etag.size(), 18u) << name;
  }
  EXPECT_NE(FindAsset(files, "index.html")->data.find("<html"), std::string_view::npos);
}

TEST(UiAssetsTest, ContentTypes) {
  EXPECT_EQ(ContentTypeFor("a/b.mjs"), "text/javascript; charset=utf-8");
  EXPECT_EQ(ContentTypeFor("x.svg"), "image/svg+xml");
  EXPECT_EQ(ContentTypeFor("noext"), "application/octet-stream");
}

}  // namespace
}  // namespace ferry::ui
