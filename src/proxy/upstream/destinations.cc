#include "proxy/upstream/destinations.h"

#include "base/strings.h"
#include "http/http_client.h"
#include "proxy/upstream/upstream_client.h"

namespace ferry::proxy {

namespace {

struct HostPort {
  std::string host;  // lower case, IPv6 without brackets
  std::string port;  // "" when none was given
};

// "host", "host:port", "[v6]", "[v6]:port" (an OriginOf() value without its scheme, or a
// --upstream-allow entry).
HostPort SplitHostPort(std::string_view text) {
  std::string s = ToLower(text);
  HostPort hp;
  size_t colon = s.rfind(':');
  if (colon != std::string::npos && s.find(']', colon) == std::string::npos &&
      (s.front() == '[' || s.find(':') == colon)) {
    hp.port = s.substr(colon + 1);
    s.resize(colon);
  }
  if (s.size() >= 2 && s.front() == '[' && s.back() == ']') s = s.substr(1, s.size() - 2);
  hp.host = std::move(s);
  return hp;
}

// The host and port of an OriginOf() value "scheme://host:port".
HostPort OfOrigin(const std::string& origin) {
  return SplitHostPort(std::string_view(origin).substr(origin.find("://") + 3));
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
  const HostPort to = OfOrigin(origin);
  for (const std::string& t : policy.trusted) {
    if (t.find("://") != std::string::npos) {
      if (OriginOf(t) == origin) return Destination::kTrusted;
      continue;
    }
    const HostPort entry = SplitHostPort(t);
    if (entry.host == to.host && (entry.port.empty() || entry.port == to.port)) {
      return Destination::kTrusted;
    }
  }
  for (const std::string& p : policy.public_hosts) {
    if (HostMatches(to.host, ToLower(p))) return Destination::kPublicOnly;
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
                    (origin.empty() ? std::string("not an http(s) URL")
                                    : "its host is not an upstream of this server (allow it "
                                      "with ferry serve --upstream-allow " +
                                          origin.substr(origin.find("://") + 3) + ")"));
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
