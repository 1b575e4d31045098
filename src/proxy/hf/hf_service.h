#pragma once
// The Hugging Face Hub proxy at /hf (docs/semantics/hf.md): clients set
// HF_ENDPOINT=http://nas:PORT/hf (huggingface_hub, transformers, datasets) or
// hubUrl: "http://nas:PORT/hf" (npm @huggingface/hub). Handlers are plain functions of a
// Request and the HfService (house style 8); HfRoutes() adds them to a router.
//
//   GET|HEAD /hf/[datasets/|spaces/]{repo}/resolve/{rev}/{path}   HandleResolve (hf_resolve.cc)
//   GET|HEAD /hf/api/{kind}/{repo}[/revision|tree/...]            HandleApiGet  (hf_api.cc)
//   POST     /hf/api/{kind}/{repo}/paths-info/{rev}               HandleApiPost (hf_api.cc)

#include <memory>
#include <string>

#include "proxy/hf/hf_access.h"
#include "proxy/service/proxy_context.h"
#include "proxy/service/single_flight.h"
#include "server/router.h"

namespace ferry::proxy::hf {

struct HfService {
  HfService(ProxyContext& px, std::string upstream, std::string server_token = "");

  ProxyContext& px;
  std::string upstream;  // "https://huggingface.co", no trailing '/'
  // The server's own Hub token (ferry serve --hf-token-file), sent for clients that send none:
  // everyone who may read /hf then reads what it may (gated repos the operator accepted).
  std::string server_token;
  AccessTable access;
  // Concurrent cold requests for one file's metadata send one HEAD upstream (hf_resolve.cc).
  SingleFlight metadata_flights;
};

// The Authorization to send upstream for `request` (docs/semantics/hf.md, "Tokens"): the
// client's own Hub token when it sent one, else the server's, else none. It is never a Ferry
// token: the server removes those before any handler runs (server/admission.h), so what is
// left in Authorization is the client's own.
std::string UpstreamAuthorization(const server::Request& request, const HfService& hf);

server::Response HandleResolve(const server::Request& request, HfService& hf);
server::Response HandleApiGet(const server::Request& request, HfService& hf);
server::Response HandleApiPost(const server::Request& request, HfService& hf);

// Adds the routes above; `hf` must outlive the router.
server::RouteRegistrar HfRoutes(std::shared_ptr<HfService> hf);

// An error answer in the Hub's style: JSON {"error"}, with X-Error-Code when `code` is not empty
// and X-Error-Message.
server::Response HubError(int status, std::string_view code, std::string_view message);

}  // namespace ferry::proxy::hf
