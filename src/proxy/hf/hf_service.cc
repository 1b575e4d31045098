#include "proxy/hf/hf_service.h"

#include "server/auth.h"

namespace ferry::proxy::hf {

HfService::HfService(ProxyContext& p, std::string up, std::string token)
    : px(p),
      upstream(std::move(up)),
      server_token(std::move(token)),
      access(*p.docs, p.options.metadata_ttl) {
  while (!upstream.empty() && upstream.back() == '/') upstream.pop_back();
}

std::string UpstreamAuthorization(const server::Request& request, const HfService& hf) {
  // Only a Bearer token, read by the server's own parser: the server leaves no other
  // Authorization, and no Ferry token (server/admission.h).
  server::Credential own = server::FindCredential(request.headers);
  if (own.source == server::CredentialSource::kBearer) return "Bearer " + own.token;
  return hf.server_token.empty() ? "" : "Bearer " + hf.server_token;
}

server::Response HubError(int status, std::string_view code, std::string_view message) {
  server::Response r = server::ErrorResponse(status, message);
  if (!code.empty()) r.headers.Set("X-Error-Code", std::string(code));
  std::string one_line(message.substr(0, 500));
  for (char& c : one_line) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  r.headers.Set("X-Error-Message", one_line);
  return r;
}

server::RouteRegistrar HfRoutes(std::shared_ptr<HfService> hf) {
  return [hf](server::Router& router) -> Status {
    HfService& s = *hf;
    // The API first: "/hf/api/..." would also match the resolve catch-all. Its POST is
    // paths-info, a read (read-only tokens may call it).
    Status st = router.Add("GET", "/hf/api/{rest...}", &HandleApiGet, s);
    if (st.ok())
      st = router.Add("POST", "/hf/api/{rest...}", server::Access::kRead, &HandleApiPost, s);
    if (st.ok()) st = router.Add("GET", "/hf/{rest...}", &HandleResolve, s);
    return st;
  };
}

}  // namespace ferry::proxy::hf
