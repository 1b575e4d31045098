#include "aws/endpoint.h"

#include "aws/shared_config.h"
#include "base/strings.h"

namespace ferry::aws {

namespace {
bool IsAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}
bool DnsCompatible(std::string_view bucket) {
  for (char c : bucket) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  }
  return true;
}
}  // namespace

Status ValidateBucketName(std::string_view b) {
  if (b.size() < 3 || b.size() > 63) {
    return InvalidArgument("bucket name '" + std::string(b) + "' must be 3 to 63 characters long");
  }
  if (!IsAlnum(b.front()) || !IsAlnum(b.back())) {
    return InvalidArgument("bucket name '" + std::string(b) +
                           "' must start and end with a letter or digit");
  }
  for (char c : b) {
    if (!IsAlnum(c) && c != '.' && c != '-' && c != '_') {
      return InvalidArgument("bucket name '" + std::string(b) + "' contains '" + std::string(1, c) +
                             "'; allowed are letters, digits, '.', '-', '_'");
    }
  }
  return Status();
}

std::string S3Endpoint::ObjectPath(const std::string& bucket, const std::string& key) const {
  return path_style ? "/" + bucket + "/" + key : "/" + key;
}

std::string S3Endpoint::ObjectUrl(const std::string& bucket, const std::string& key) const {
  return scheme + "://" + authority + ObjectPath(bucket, key);
}

Result<std::pair<std::string, std::string>> ParseEndpointUrl(std::string_view endpoint) {
  // The endpoint as messages show it: no user:password@, no query.
  std::string shown(endpoint.substr(0, endpoint.find('?')));
  if (size_t at = shown.find('@'); at != std::string::npos) {
    size_t sep = shown.find("://");
    shown.erase(sep == std::string::npos || sep > at ? 0 : sep + 3,
                at + 1 - (sep == std::string::npos || sep > at ? 0 : sep + 3));
  }
  size_t sep = endpoint.find("://");
  if (sep == std::string::npos) {
    return InvalidArgument("S3 endpoint '" + shown + "' must start with http:// or https://");
  }
  std::string scheme = ToLower(endpoint.substr(0, sep));
  if (scheme != "http" && scheme != "https") {
    return InvalidArgument("S3 endpoint '" + shown + "' must use http or https");
  }
  std::string authority(endpoint.substr(sep + 3));
  // user:password@ never goes into a Host header or a message: credentials come from the
  // credential chain only (docs/configuration.md).
  if (size_t at = authority.find('@'); at != std::string::npos && authority.find('/') > at) {
    return InvalidArgument("S3 endpoint '" + shown +
                           "' must not contain user:password@; set credentials with "
                           "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or a profile");
  }
  while (!authority.empty() && authority.back() == '/') authority.pop_back();
  if (authority.empty() || authority.find('/') != std::string::npos ||
      authority.find('?') != std::string::npos) {
    return InvalidArgument("S3 endpoint '" + shown + "' must be scheme://host[:port] with no path");
  }
  return std::pair{scheme, authority};
}

Result<S3Endpoint> ResolveS3Endpoint(const Environment& env, const S3EndpointInput& in) {
  FERRY_RETURN_IF_ERROR(ValidateBucketName(in.bucket));
  SharedConfig cfg = LoadSharedConfig(env, in.profile);
  FERRY_RETURN_IF_ERROR(cfg.CheckFound());
  bool ignore_configured = ToLower(env.GetOr("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "")) == "true";
  const bool first = in.profile_first;

  S3Endpoint ep;
  ep.region = in.region;
  if (ep.region.empty() && first) ep.region = cfg.Get("region").value_or("");
  if (ep.region.empty()) ep.region = env.GetOr("AWS_REGION", "");
  if (ep.region.empty()) ep.region = env.GetOr("AWS_DEFAULT_REGION", "");
  if (ep.region.empty()) ep.region = cfg.Get("region").value_or("us-east-1");

  std::string endpoint = in.endpoint;
  auto from_profile = [&] {
    return cfg.Get("s3.endpoint_url").value_or(cfg.Get("endpoint_url").value_or(""));
  };
  if (endpoint.empty() && !ignore_configured) {
    if (first) endpoint = from_profile();
    if (!endpoint.empty()) {
    } else if (auto e = env.Get("AWS_ENDPOINT_URL_S3")) {
      endpoint = *e;
    } else if (auto e2 = env.Get("AWS_ENDPOINT_URL")) {
      endpoint = *e2;
    } else {
      endpoint = from_profile();
    }
  }
  if (endpoint.empty()) {
    ep.scheme = "https";
    ep.authority = "s3." + ep.region + ".amazonaws.com";
  } else {
    FERRY_ASSIGN_OR_RETURN(auto parts, ParseEndpointUrl(endpoint));
    ep.scheme = std::move(parts.first);
    ep.authority = std::move(parts.second);
    ep.custom = true;
  }

  std::string addressing = in.addressing;
  if (addressing.empty()) addressing = cfg.Get("s3.addressing_style").value_or("");
  if (addressing.empty() || addressing == "auto") {
    ep.path_style = ep.custom || !DnsCompatible(in.bucket);
  } else if (addressing == "path") {
    ep.path_style = true;
  } else if (addressing == "virtual") {
    if (!DnsCompatible(in.bucket) && ep.scheme == "https") {
      return InvalidArgument("bucket '" + in.bucket +
                             "' cannot use virtual-hosted addressing over https");
    }
    ep.path_style = false;
  } else {
    return InvalidArgument("addressing must be 'path' or 'virtual', not '" + addressing + "'");
  }
  if (!ep.path_style) ep.authority = in.bucket + "." + ep.authority;
  return ep;
}

}  // namespace ferry::aws
