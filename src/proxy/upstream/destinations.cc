#include "proxy/upstream/destinations.h"

#include "base/strings.h"
#include "http/http_client.h"
#include "proxy/upstream/upstream_client.h"

namespace ferry::proxy {

namespace {

// "host" and "port" of an OriginOf() value "scheme://host:port".
std::pair<std::string, std::string> HostAndPort(const std::string& origin) {
  std::string_view rest = std::string_view(origin).substr(origin.find("://") + 3);
  size_t colon = rest.rfind(':');
  return {std::string(rest.substr(0, colon)), std::string(rest.substr(colon + 1))};
}

bool HostMatches(std::string_view host, std::string_view pattern) {
  if (pattern.starts_with("*.")) {
    return EndsWith(host, pattern.substr(1)) && host.size() > pattern.size() - 1;
  }
  return EqualsIgnoreCase(host, pattern);
}

}  // namespace

Destination Classify(std::string_view url, const DestinationPolicy& policy) {
  std::string origin = OriginOf(url);
  if (origin.empty()) return Destination::kRefused;
  auto [host, port] = HostAndPort(origin);
  for (const std::string& t : policy.trusted) {
    if (t.find("://") != std::string::npos) {
      if (OriginOf(t) == origin) return Destination::kTrusted;
      continue;
    }
    std::string entry = ToLower(t);
    size_t colon = entry.rfind(':');
    bool has_port = colon != std::string::npos && entry.find(']', colon) == std::string::npos;
    std::string h = has_port ? entry.substr(0, colon) : entry;
    if (h.size() >= 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
    std::string bare_host = host;
    if (bare_host.size() >= 2 && bare_host.front() == '[') {
      bare_host = bare_host.substr(1, bare_host.size() - 2);
    }
    if (h == bare_host && (!has_port || entry.substr(colon + 1) == port)) {
      return Destination::kTrusted;
    }
  }
  for (const std::string& p : policy.public_hosts) {
    if (HostMatches(host, ToLower(p))) return Destination::kPublicOnly;
  }
  return Destination::kRefused;
}

Status CheckDestination(std::string_view url, const DestinationPolicy& policy, bool* public_only) {
  switch (Classify(url, policy)) {
    case Destination::kTrusted:
      *public_only = false;
      return Status();
    case Destination::kPublicOnly:
      *public_only = true;
      return Status();
    case Destination::kRefused:
      break;
  }
  std::string origin = OriginOf(url);
  return Status(StatusCode::kPermissionDenied,
                "refusing to fetch '" + http::DisplayUrl(url) + "': " +
                    (origin.empty()
                         ? std::string("not an http(s) URL")
                         : "its host is not an upstream of this server (allow it "
                           "with ferry serve --upstream-allow " +
                               HostAndPort(origin).first + ":" + HostAndPort(origin).second + ")"));
}

std::vector<std::string> DefaultPublicHostsFor(std::string_view upstream_url) {
  std::string origin = OriginOf(upstream_url);
  if (origin == "https://huggingface.co:443") {
    // The Hub's CDNs and Xet storage: cdn-lfs*.hf.co, cas-bridge.xethub.hf.co, ...
    return {"huggingface.co", "*.huggingface.co", "hf.co", "*.hf.co"};
  }
  if (origin == "https://pypi.org:443") return {"files.pythonhosted.org"};
  return {};
}

}  // namespace ferry::proxy
