#include "server/browser_policy.h"

#include <gtest/gtest.h>

namespace ferry::server {
namespace {

TEST(HostIsAllowedTest, AddressesLocalhostTheMachineAndListedNames) {
  const std::vector<std::string> none, listed{"nas.lan", "Ferry"};
  for (std::string_view ok :
       {"127.0.0.1:8780", "127.0.0.1", "10.0.0.5:80", "[::1]:8780", "[fe80::1]", "localhost:8780",
        "LOCALHOST", "app.localhost:1", "localhost.:8780", "nas:8780"}) {
    EXPECT_TRUE(HostIsAllowed(ok, "nas", none)) << ok;
  }
  for (std::string_view bad :
       {"evil.example:8780", "evil.example", "", ":8780", "127.0.0.1.evil.example",
        "localhost.evil.example", "nas.lan", "[::1", "host:port", "127.0.0.1:80:80"}) {
    EXPECT_FALSE(HostIsAllowed(bad, "nas", none)) << bad;
  }
  EXPECT_TRUE(HostIsAllowed("NAS.lan:8780", "nas", listed));
  EXPECT_TRUE(HostIsAllowed("ferry:8780", "", listed));
  EXPECT_FALSE(HostIsAllowed("evil.example", "", listed));
  EXPECT_TRUE(HostIsAllowed("anything.example", "", {"*"}));
}

Request Post(std::vector<std::pair<std::string, std::string>> headers) {
  Request r;
  r.method = "POST";
  r.path = "/api/2.0/mlflow/runs/delete";
  r.headers.Add("Host", "127.0.0.1:8780");
  for (auto& [k, v] : headers) r.headers.Add(k, v);
  return r;
}

TEST(CrossSiteWriteRefusalTest, FormsAndNoCorsPostsFromOtherOriginsAreRefused) {
  // What a page of another origin can send without a preflight.
  for (auto headers : std::vector<std::vector<std::pair<std::string, std::string>>>{
           {{"Content-Type", "text/plain;charset=UTF-8"}},
           {{"Content-Type", "application/x-www-form-urlencoded"}},
           {{"Content-Type", "multipart/form-data; boundary=x"}},
           {},
           {{"Content-Type", "application/json"}, {"Origin", "http://127.0.0.1:3000"}},
           {{"Content-Type", "application/json"}, {"Origin", "null"}},
           {{"Content-Type", "application/json"}, {"Sec-Fetch-Site", "same-site"}},
           {{"Content-Type", "application/json"}, {"Sec-Fetch-Site", "cross-site"}}}) {
    auto refused = CrossSiteWriteRefusal(Post(headers), false);
    ASSERT_TRUE(refused);
    EXPECT_TRUE(refused->status == 403 || refused->status == 415) << refused->status;
  }
  // Programs (no Origin) with JSON, and this server's own pages.
  EXPECT_FALSE(CrossSiteWriteRefusal(Post({{"Content-Type", "application/json"}}), false));
  EXPECT_FALSE(CrossSiteWriteRefusal(Post({{"Content-Type", "application/json; charset=utf-8"},
                                           {"Origin", "http://127.0.0.1:8780"},
                                           {"Sec-Fetch-Site", "same-origin"}}),
                                     false));
  // A token in Authorization: the content type does not matter, the origin still does.
  EXPECT_FALSE(CrossSiteWriteRefusal(Post({{"Content-Type", "text/plain"}}), true));
  EXPECT_TRUE(CrossSiteWriteRefusal(Post({{"Origin", "http://evil.example"}}), true));
  // Default ports.
  Request r = Post({{"Origin", "http://nas"}, {"Content-Type", "application/json"}});
  r.headers.Set("Host", "nas:80");
  EXPECT_FALSE(CrossSiteWriteRefusal(r, false));
  // PUT and DELETE are preflighted by browsers: no content-type rule.
  Request put = Post({});
  put.method = "PUT";
  EXPECT_FALSE(CrossSiteWriteRefusal(put, false));
}

TEST(AddSecurityHeadersTest, SandboxesWhatDoesNotSayOtherwise) {
  Headers h;
  AddSecurityHeaders(h);
  EXPECT_EQ(h.Get("X-Content-Type-Options"), "nosniff");
  EXPECT_EQ(h.Get("Content-Security-Policy"), kSandboxContentSecurityPolicy);
  Headers ui;
  ui.Set("Content-Security-Policy", std::string(kUiContentSecurityPolicy));
  AddSecurityHeaders(ui);
  EXPECT_EQ(ui.Get("Content-Security-Policy"), kUiContentSecurityPolicy);
}

}  // namespace
}  // namespace ferry::server
