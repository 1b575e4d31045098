#pragma once
// AWS credentials and the provider interface every signer asks for them.

#include <memory>
#include <optional>
#include <string>

#include "base/status.h"
#include "base/time_format.h"

namespace ferry::aws {

struct Credentials {
  std::string access_key_id;
  std::string secret_access_key;  // never printed
  std::string session_token;      // never printed; empty for long-term keys
  std::optional<SystemTime> expiration;
  std::string source;    // "environment", "profile default", "web identity", ...
  std::string identity;  // role ARN or profile name when known; never secret
  bool anonymous = false;
};

// "AKIA…MPLE": enough to recognise a key, not enough to use it.
std::string MaskAccessKey(std::string_view access_key_id);

// One line for `ferry auth`: source, masked key id, identity, expiry. No secret.
std::string DescribeCredentials(const Credentials& creds);

// Supplies credentials, refreshing temporary ones before they expire.
// Thread-safe: signing threads call GetCredentials() concurrently.
class CredentialsProvider {
 public:
  virtual ~CredentialsProvider() = default;
  virtual Result<Credentials> GetCredentials() = 0;
};

// Always returns the same credentials (tests, anonymous access).
class StaticCredentialsProvider final : public CredentialsProvider {
 public:
  explicit StaticCredentialsProvider(Credentials creds);
  Result<Credentials> GetCredentials() override { return creds_; }

 private:
  Credentials creds_;
};

}  // namespace ferry::aws
