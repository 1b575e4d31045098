#include "server/browser_policy.h"

#include <arpa/inet.h>

#include "base/strings.h"

namespace ferry::server {

namespace {

struct Authority {
  std::string host;  // lower case, without brackets
  std::string port;  // "" when none was given
};

// "name", "name:port", "[v6]", "[v6]:port"; nullopt when malformed.
std::optional<Authority> ParseAuthority(std::string_view text) {
  text = Trim(text);
  Authority a;
  std::string_view rest;
  if (!text.empty() && text.front() == '[') {
    size_t close = text.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    a.host = ToLower(text.substr(1, close - 1));
    rest = text.substr(close + 1);
  } else {
    size_t colon = text.find(':');
    a.host = ToLower(text.substr(0, colon));
    rest = colon == std::string_view::npos ? "" : text.substr(colon);
  }
  if (!rest.empty()) {
    if (rest.front() != ':' || rest.size() == 1) return std::nullopt;
    rest.remove_prefix(1);
    if (!ParseUint64(rest)) return std::nullopt;
    a.port = std::string(rest);
  }
  if (a.host.empty()) return std::nullopt;
  return a;
}

bool IsIpLiteral(const std::string& host) {
  unsigned char buf[16];
  return inet_pton(AF_INET, host.c_str(), buf) == 1 || inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

// The media type of a Content-Type value, lower case, without parameters.
std::string MediaType(std::string_view content_type) {
  return ToLower(Trim(content_type.substr(0, content_type.find(';'))));
}

Response Refused(int status, std::string message) {
  Response r = ErrorResponse(status, message,
                             status == 415 ? "INVALID_PARAMETER_VALUE" : "PERMISSION_DENIED");
  r.close = true;
  return r;
}

}  // namespace

void AddSecurityHeaders(Headers& headers) {
  auto set_default = [&](std::string_view name, std::string_view value) {
    if (!headers.Has(name)) headers.Set(name, std::string(value));
  };
  set_default("X-Content-Type-Options", "nosniff");
  set_default("Content-Security-Policy", kSandboxContentSecurityPolicy);
  set_default("Cross-Origin-Resource-Policy", "same-origin");
  set_default("Referrer-Policy", "no-referrer");
  set_default("X-Frame-Options", "DENY");
}

bool HostIsAllowed(std::string_view host_header, std::string_view machine_name,
                   const std::vector<std::string>& allowed_hosts) {
  auto a = ParseAuthority(host_header);
  if (!a) return false;
  if (IsIpLiteral(a->host)) return true;
  std::string_view host = a->host;
  if (!host.empty() && host.back() == '.') host.remove_suffix(1);  // "localhost." is the same
  if (host == "localhost" || EndsWith(host, ".localhost")) return true;
  if (!machine_name.empty() && EqualsIgnoreCase(host, machine_name)) return true;
  for (const std::string& allowed : allowed_hosts) {
    if (allowed == "*" || EqualsIgnoreCase(host, allowed)) return true;
  }
  return false;
}

std::optional<Response> CrossSiteWriteRefusal(const Request& req, bool token_in_authorization) {
  if (auto site = req.headers.Get("Sec-Fetch-Site")) {
    std::string v = ToLower(Trim(*site));
    if (v == "cross-site" || v == "same-site") {
      return Refused(403, "refusing " + req.method + " " + req.path + " from a page of another " +
                              "site (Sec-Fetch-Site: " + v + "): writes come from this server's " +
                              "own pages or from programs");
    }
  }
  if (auto origin = req.headers.Get("Origin")) {
    // "null" (a sandboxed page, a file: URL) and every origin but this server's own.
    std::string_view o = Trim(*origin);
    size_t scheme_end = o.find("://");
    std::optional<Authority> from;
    std::string scheme;
    if (scheme_end != std::string_view::npos) {
      scheme = ToLower(o.substr(0, scheme_end));
      from = ParseAuthority(o.substr(scheme_end + 3));
    }
    auto to = ParseAuthority(req.headers.Get("Host").value_or(""));
    auto port_of = [&](const Authority& a) {
      return !a.port.empty() ? a.port : (scheme == "https" ? "443" : "80");
    };
    bool same = from && to && (scheme == "http" || scheme == "https") && from->host == to->host &&
                port_of(*from) == port_of(*to);
    if (!same) {
      return Refused(403, "refusing " + req.method + " " + req.path + " from the web origin '" +
                              std::string(o.substr(0, 200)) + "': writes come from this " +
                              "server's own pages or from programs");
    }
  }
  if (req.method == "POST" && !token_in_authorization) {
    std::string type = MediaType(req.headers.Get("Content-Type").value_or(""));
    if (type.empty() || type == "text/plain" || type == "application/x-www-form-urlencoded" ||
        type == "multipart/form-data") {
      return Refused(415, "POST " + req.path + " writes and needs Content-Type: application/json " +
                              "or a token in Authorization (got " +
                              (type.empty() ? std::string("none") : "'" + type + "'") +
                              ", which any web page can send)");
    }
  }
  return std::nullopt;
}

}  // namespace ferry::server
