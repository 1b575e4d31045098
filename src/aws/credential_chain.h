#pragma once
// The default credential chain, in the AWS CLI's order:
//   1. environment: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN
//   2. web identity: AWS_WEB_IDENTITY_TOKEN_FILE + AWS_ROLE_ARN (or the profile's
//      web_identity_token_file + role_arn), exchanged with STS AssumeRoleWithWebIdentity
//   3. shared files: the profile's aws_access_key_id / aws_secret_access_key / aws_session_token
//   4. container: AWS_CONTAINER_CREDENTIALS_RELATIVE_URI or _FULL_URI, with
//      AWS_CONTAINER_AUTHORIZATION_TOKEN(_FILE)
//   5. EC2 instance metadata (IMDSv2), unless AWS_EC2_METADATA_DISABLED=true
// The first configured source is used. With `profile_first` (a "PROFILE:s3://" URL), a profile
// that holds keys or a web identity is used before the environment (steps 3 and 2 move first). The
// chain is resolved lazily, on the first request that needs a signature, and temporary credentials
// are refreshed 5 minutes before they expire.

#include <chrono>
#include <memory>
#include <string>

#include "aws/credentials.h"
#include "base/environment.h"

namespace ferry::http {
class Client;
}

namespace ferry::aws {

struct ChainOptions {
  std::shared_ptr<const Environment> env;  // required
  std::string profile;                     // overrides AWS_PROFILE
  bool profile_first = false;          // the profile's keys/web identity before the environment's
  bool anonymous = false;              // sign nothing
  std::shared_ptr<http::Client> http;  // for STS/container/IMDS; made when null
  std::chrono::milliseconds metadata_timeout{1000};  // IMDS and container endpoints
  std::chrono::seconds refresh_margin{300};
};

std::shared_ptr<CredentialsProvider> MakeDefaultCredentialsChain(ChainOptions options);

// Building blocks, exposed for tests. Each fetches once, without caching.
Result<Credentials> FetchEnvironmentCredentials(const Environment& env);
Result<Credentials> FetchWebIdentityCredentials(const ChainOptions& options,
                                                const std::string& token_file,
                                                const std::string& role_arn,
                                                const std::string& session_name);
Result<Credentials> FetchContainerCredentials(const ChainOptions& options);
Result<Credentials> FetchImdsCredentials(const ChainOptions& options);

}  // namespace ferry::aws
