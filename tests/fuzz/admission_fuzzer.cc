// libFuzzer target: the server's admission of a request (server/admission.h) from its header
// lines: the credential parsers (Bearer, Basic's base64, the cookie), areas, Host and Origin.
// Input: "METHOD PATH" on the first line, then "Name: value" lines.
// Properties: never crashes; a refusal never echoes a token; an admitted request carries no
// Ferry credential any more (a Ferry token never reaches a handler); only the write token,
// presented in Authorization, makes a writer.
#include <cstdint>
#include <string>
#include <string_view>

#include "server/admission.h"
#include "server/auth.h"

namespace {

using ferry::server::Access;
using ferry::server::AccessPolicy;
using ferry::server::Principal;
using ferry::server::Request;

const AccessPolicy& Policy() {
  static const AccessPolicy p = [] {
    AccessPolicy a;
    a.tokens = {"writer-secret"};
    a.read_tokens = {"reader-secret"};
    a.areas = {{.prefix = "/hf/", .anonymous_read = true},
               {.prefix = "/pypi/", .anonymous_read = false, .basic_challenge = true}};
    a.allowed_hosts = {"nas.lan"};
    a.machine_name = "nas";
    return a;
  }();
  return p;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  Request req;
  size_t nl = in.find('\n');
  std::string_view first = in.substr(0, nl);
  size_t sp = first.find(' ');
  req.method = std::string(first.substr(0, sp));
  req.path = sp == std::string_view::npos ? "/" : std::string(first.substr(sp + 1));
  in = nl == std::string_view::npos ? std::string_view() : in.substr(nl + 1);
  while (!in.empty()) {
    nl = in.find('\n');
    std::string_view line = in.substr(0, nl);
    in = nl == std::string_view::npos ? std::string_view() : in.substr(nl + 1);
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view value = line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    req.headers.Add(std::string(line.substr(0, colon)), std::string(value));
  }
  const ferry::server::Credential sent = ferry::server::FindCredential(req.headers);
  // A refusal may quote the request (its method, path, Host, Origin), never a credential header.
  bool quoted_elsewhere = req.path.find("-secret") != std::string::npos ||
                          req.method.find("-secret") != std::string::npos;
  for (const auto& [k, v] : req.headers.fields()) {
    if (k != "Authorization" && k != "Cookie" && v.find("-secret") != std::string::npos) {
      quoted_elsewhere = true;
    }
  }
  const bool writer_in_header = (sent.source == ferry::server::CredentialSource::kBearer ||
                                 sent.source == ferry::server::CredentialSource::kBasic) &&
                                sent.token == "writer-secret";
  for (Access access : {Access::kRead, Access::kWrite, Access::kPublic}) {
    Request r = req;
    auto refused = ferry::server::Admit(r, access, Policy());
    if (refused) {
      if (!quoted_elsewhere && refused->body.find("-secret") != std::string::npos) __builtin_trap();
      continue;
    }
    if (access == Access::kPublic) continue;  // public routes see the request as sent
    auto left = ferry::server::FindCredential(r.headers);
    if (ferry::server::CredentialPrincipal(left, Policy().tokens, Policy().read_tokens)) {
      __builtin_trap();
    }
    // The one Authorization left is a Bearer token that is not Ferry's.
    if (r.headers.Has("Authorization") &&
        (left.source != ferry::server::CredentialSource::kBearer || left.token == "writer-secret" ||
         left.token == "reader-secret")) {
      __builtin_trap();
    }
    if (r.principal == Principal::kWriter && !writer_in_header) __builtin_trap();
  }
  return 0;
}
