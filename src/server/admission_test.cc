#include "server/admission.h"

#include <gtest/gtest.h>

#include "base/hash.h"
#include "server/auth.h"

namespace ferry::server {
namespace {

AccessPolicy Tokens() {
  AccessPolicy p;
  p.tokens = {"writer"};
  p.read_tokens = {"reader"};
  p.areas = {{.prefix = "/hf/", .anonymous_read = true},
             {.prefix = "/pypi/", .anonymous_read = false, .basic_challenge = true}};
  p.machine_name = "nas";
  return p;
}

Request Req(std::string method, std::string path,
            std::vector<std::pair<std::string, std::string>> headers = {}) {
  Request r;
  r.method = std::move(method);
  r.path = std::move(path);
  r.headers.Add("Host", "127.0.0.1:8780");
  for (auto& [k, v] : headers) r.headers.Add(k, v);
  return r;
}

int StatusOf(const std::optional<Response>& r) { return r ? r->status : 0; }

TEST(AdmitTest, TokensGrantWhatTheySayAndLeaveTheRequest) {
  AccessPolicy p = Tokens();
  Request w = Req("POST", "/api/2.0/mlflow/runs/create",
                  {{"Authorization", "Bearer writer"}, {"Content-Type", "text/plain"}});
  EXPECT_FALSE(Admit(w, Access::kWrite, p));
  EXPECT_EQ(w.principal, Principal::kWriter);
  EXPECT_FALSE(w.headers.Has("Authorization"));  // a Ferry token never reaches a handler

  Request r = Req("GET", "/api/2.0/mlflow/runs/get", {{"Authorization", "Bearer reader"}});
  EXPECT_FALSE(Admit(r, Access::kRead, p));
  EXPECT_EQ(r.principal, Principal::kReader);
  Request rw = Req("POST", "/api/2.0/mlflow/runs/delete", {{"Authorization", "Bearer reader"}});
  EXPECT_EQ(StatusOf(Admit(rw, Access::kWrite, p)), 403);

  Request none = Req("GET", "/api/2.0/mlflow/runs/get");
  auto refused = Admit(none, Access::kRead, p);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 401);
  EXPECT_TRUE(refused->close);
  EXPECT_EQ(refused->headers.Get("WWW-Authenticate"), "Bearer realm=\"ferry\"");
  Request bad = Req("GET", "/api/2.0/mlflow/runs/get", {{"Authorization", "Bearer nope"}});
  EXPECT_EQ(StatusOf(Admit(bad, Access::kRead, p)), 401);
}

TEST(AdmitTest, PipGetsABasicChallengeAndMayAnswerIt) {
  AccessPolicy p = Tokens();
  Request none = Req("GET", "/pypi/simple/numpy/");
  auto refused = Admit(none, Access::kRead, p);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 401);
  int basic = 0;
  for (const auto& [k, v] : refused->headers.fields()) {
    if (k == "WWW-Authenticate" && v.starts_with("Basic ")) ++basic;
  }
  EXPECT_EQ(basic, 1);
  Request pip = Req("GET", "/pypi/simple/numpy/",
                    {{"Authorization", "Basic " + Base64Encode(AsBytes("lab:reader"))}});
  EXPECT_FALSE(Admit(pip, Access::kRead, p));
  EXPECT_EQ(pip.principal, Principal::kReader);
  EXPECT_FALSE(pip.headers.Has("Authorization"));
}

TEST(AdmitTest, AnOpenAreaReadsWithoutATokenAndKeepsTheClientsOwn) {
  AccessPolicy p = Tokens();
  Request hf = Req("GET", "/hf/org/model/resolve/main/config.json",
                   {{"Authorization", "Bearer hf_clients_own"}});
  EXPECT_FALSE(Admit(hf, Access::kRead, p));
  EXPECT_EQ(hf.principal, Principal::kAnonymous);
  EXPECT_EQ(hf.headers.Get("Authorization"), "Bearer hf_clients_own");
  // A Ferry token there is still recognised, and removed.
  Request ferry =
      Req("GET", "/hf/org/model/resolve/main/config.json", {{"Authorization", "Bearer writer"}});
  EXPECT_FALSE(Admit(ferry, Access::kRead, p));
  EXPECT_EQ(ferry.principal, Principal::kWriter);
  EXPECT_FALSE(ferry.headers.Has("Authorization"));
  // Only a Bearer token stays: Basic (whatever its user name holds) and other schemes go.
  Request basic = Req("GET", "/hf/org/model/resolve/main/config.json",
                      {{"Authorization", "Basic " + Base64Encode(AsBytes("writer:not-a-token"))}});
  EXPECT_FALSE(Admit(basic, Access::kRead, p));
  EXPECT_EQ(basic.principal, Principal::kAnonymous);
  EXPECT_FALSE(basic.headers.Has("Authorization"));
  Request other =
      Req("GET", "/hf/org/model/resolve/main/config.json", {{"Authorization", "Token writer"}});
  EXPECT_FALSE(Admit(other, Access::kRead, p));
  EXPECT_FALSE(other.headers.Has("Authorization"));
  // Writes in the open area still need a token; other areas are not open.
  Request write = Req("POST", "/hf/api/models/x/preupload/main");
  EXPECT_EQ(StatusOf(Admit(write, Access::kWrite, p)), 401);
  Request tracker = Req("GET", "/api/2.0/mlflow/experiments/search");
  EXPECT_EQ(StatusOf(Admit(tracker, Access::kRead, p)), 401);
}

TEST(AdmitTest, TheCookieReadsAndIsRemoved) {
  AccessPolicy p = Tokens();
  const std::string cookie = "theme=dark; ferry_token=" + CookieValueFor("writer");
  Request read = Req("POST", "/ajax-api/2.0/mlflow/runs/search", {{"Cookie", cookie}});
  EXPECT_FALSE(Admit(read, Access::kRead, p));
  EXPECT_EQ(read.principal, Principal::kReader);
  EXPECT_EQ(read.headers.Get("Cookie"), "theme=dark");
  Request write = Req("POST", "/ajax-api/2.0/mlflow/runs/delete",
                      {{"Cookie", cookie}, {"Content-Type", "application/json"}});
  auto refused = Admit(write, Access::kWrite, p);
  EXPECT_EQ(StatusOf(refused), 403);
  EXPECT_EQ(refused->body.find("writer"), std::string::npos);  // never echoes a token
  // The bare token in the cookie (what older UIs stored) is not accepted.
  Request old = Req("GET", "/ajax-api/2.0/mlflow/runs/get", {{"Cookie", "ferry_token=writer"}});
  EXPECT_EQ(StatusOf(Admit(old, Access::kRead, p)), 401);
}

TEST(AdmitTest, WithoutTokensTheHostMustNameThisServer) {
  AccessPolicy p;  // the default server: loopback, no tokens
  p.machine_name = "nas";
  Request ok =
      Req("GET", "/api/2.0/mlflow/experiments/search", {{"Authorization", "Bearer hf_own"}});
  EXPECT_FALSE(Admit(ok, Access::kRead, p));
  EXPECT_EQ(ok.headers.Get("Authorization"), "Bearer hf_own");  // not a Ferry token: kept
  Request rebound = Req("GET", "/api/2.0/mlflow/experiments/search");
  rebound.headers.Set("Host", "evil.example:8780");
  EXPECT_EQ(StatusOf(Admit(rebound, Access::kRead, p)), 403);
  Request no_host = Req("GET", "/api/2.0/mlflow/experiments/search");
  no_host.headers.Remove("Host");
  EXPECT_EQ(StatusOf(Admit(no_host, Access::kRead, p)), 403);
  p.allowed_hosts = {"evil.example"};
  EXPECT_FALSE(Admit(rebound, Access::kRead, p));
  // With a token the Host does not matter (the page has no token).
  AccessPolicy t = Tokens();
  Request named = Req("GET", "/api/2.0/mlflow/runs/get", {{"Authorization", "Bearer reader"}});
  named.headers.Set("Host", "nas.example.org:8780");
  EXPECT_FALSE(Admit(named, Access::kRead, t));
  // Public routes need nothing.
  Request ui = Req("GET", "/ui/app.js");
  ui.headers.Set("Host", "evil.example");
  EXPECT_FALSE(Admit(ui, Access::kPublic, t));
}

TEST(AdmitTest, CrossSiteWritesAreRefusedOnTheDefaultServer) {
  AccessPolicy p;
  Request form =
      Req("POST", "/api/2.0/mlflow/experiments/create",
          {{"Content-Type", "text/plain;charset=UTF-8"}, {"Origin", "http://127.0.0.1:5500"}});
  EXPECT_EQ(StatusOf(Admit(form, Access::kWrite, p)), 403);
  Request no_cors = Req("POST", "/api/2.0/mlflow/runs/delete", {{"Content-Type", "text/plain"}});
  EXPECT_EQ(StatusOf(Admit(no_cors, Access::kWrite, p)), 415);
  Request client =
      Req("POST", "/api/2.0/mlflow/runs/delete", {{"Content-Type", "application/json"}});
  EXPECT_FALSE(Admit(client, Access::kWrite, p));
  // A search is a read: no content-type rule (the UI and clients POST JSON anyway).
  Request search = Req("POST", "/api/2.0/mlflow/runs/search", {{"Content-Type", "text/plain"}});
  EXPECT_FALSE(Admit(search, Access::kRead, p));
}

}  // namespace
}  // namespace ferry::server
