#include "aws/credentials.h"

#include "base/redact.h"

namespace ferry::aws {

std::string MaskAccessKey(std::string_view id) {
  if (id.size() <= 8) return std::string(id.size(), '*');
  return std::string(id.substr(0, 4)) + "…" + std::string(id.substr(id.size() - 4));
}

std::string DescribeCredentials(const Credentials& c) {
  if (c.anonymous) return "anonymous (requests are not signed)";
  std::string s = "source: " + c.source + ", access key: " + MaskAccessKey(c.access_key_id);
  if (!c.identity.empty()) s += ", identity: " + c.identity;
  s += c.session_token.empty() ? ", long-term key" : ", temporary (session token)";
  if (c.expiration) s += ", expires " + FormatIso8601(*c.expiration);
  return s;
}

StaticCredentialsProvider::StaticCredentialsProvider(Credentials creds) : creds_(std::move(creds)) {
  RegisterSecret(creds_.secret_access_key);
  RegisterSecret(creds_.session_token);
}

}  // namespace ferry::aws
