// Credential sources that ask a service: STS (web identity), the container credential endpoint
// and EC2 instance metadata (IMDSv2). Each is one fetch; caching and refresh live in the chain.

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "aws/credential_chain.h"
#include "aws/shared_config.h"
#include "aws/sts.h"
#include "base/redact.h"
#include "base/retry.h"
#include "base/strings.h"
#include "http/http_client.h"

namespace ferry::aws {

namespace {

Result<std::string> ReadSmallFile(const std::string& path, std::string_view what) {
  std::ifstream in(path);
  if (!in) return NotFound(std::string(what) + " '" + path + "' cannot be read");
  std::stringstream ss;
  ss << in.rdbuf();
  return std::string(Trim(ss.str()));
}

// Parses the JSON shape shared by the container endpoint and IMDS.
Result<Credentials> ParseJsonCredentials(const std::string& body, std::string source) {
  auto j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || !j.contains("AccessKeyId") ||
      !j.contains("SecretAccessKey")) {
    return Status(StatusCode::kUnauthenticated, source + " returned no credentials");
  }
  Credentials c{.access_key_id = j.value("AccessKeyId", ""),
                .secret_access_key = j.value("SecretAccessKey", ""),
                .session_token = j.value("Token", ""),
                .source = std::move(source),
                .identity = j.value("RoleArn", "")};
  RegisterSecret(c.secret_access_key);
  RegisterSecret(c.session_token);
  if (auto exp = ParseIso8601(j.value("Expiration", ""))) c.expiration = *exp;
  return c;
}

Status HttpFailure(std::string_view what, const http::Response& r) {
  StatusCode code =
      r.status >= 500 || r.status == 429 ? StatusCode::kUnavailable : StatusCode::kUnauthenticated;
  return Status(code, std::string(what) + " answered HTTP " + std::to_string(r.status),
                ErrorDetail{.http_status = static_cast<int>(r.status)});
}

Result<http::Response> SendWithRetry(http::Client& client, const http::Request& req, int attempts) {
  Result<http::Response> out = Status(StatusCode::kInternal, "not sent");
  Status s = RunWithRetry(RetryPolicy{.max_attempts = attempts}, [&]() -> Status {
    out = client.Send(req);
    if (!out.ok()) return out.status();
    if (out->status >= 500 || out->status == 429) return Unavailable("retry");
    return Status();
  });
  if (!out.ok()) return out.status();
  return out;
}

}  // namespace

Result<Credentials> FetchWebIdentityCredentials(const ChainOptions& opts,
                                                const std::string& token_file,
                                                const std::string& role_arn,
                                                const std::string& session_name) {
  FERRY_ASSIGN_OR_RETURN(std::string token, ReadSmallFile(token_file, "web identity token file"));
  RegisterSecret(token);
  const Environment& env = *opts.env;
  SharedConfig cfg = LoadSharedConfig(env, opts.profile);
  std::string endpoint;
  if (auto e = env.Get("AWS_ENDPOINT_URL_STS")) {
    endpoint = *e;
  } else if (auto e2 = env.Get("AWS_ENDPOINT_URL")) {
    endpoint = *e2;
  } else {
    auto region = env.Get("AWS_REGION");
    if (!region) region = env.Get("AWS_DEFAULT_REGION");
    if (!region) region = cfg.Get("region");
    endpoint = region ? "https://sts." + *region + ".amazonaws.com" : "https://sts.amazonaws.com";
  }
  std::string body =
      "Action=AssumeRoleWithWebIdentity&Version=2011-06-15&RoleArn=" + PercentEncode(role_arn) +
      "&RoleSessionName=" + PercentEncode(session_name) +
      "&WebIdentityToken=" + PercentEncode(token);
  http::Request req{.method = "POST",
                    .url = endpoint + "/",
                    .headers = {{"Content-Type", "application/x-www-form-urlencoded"}},
                    .body = body,
                    .send_body = true};
  auto resp = SendWithRetry(*opts.http, req, 3);
  if (!resp.ok()) {
    return resp.status().WithContext("STS AssumeRoleWithWebIdentity at " +
                                     http::DisplayUrl(endpoint));
  }
  if (!resp->ok()) {
    auto err = ParseStsError(resp->body);
    return Status(StatusCode::kUnauthenticated,
                  "STS AssumeRoleWithWebIdentity for role '" + role_arn + "' failed: HTTP " +
                      std::to_string(resp->status) + (err.empty() ? "" : " " + err),
                  ErrorDetail{.http_status = static_cast<int>(resp->status)});
  }
  auto creds = ParseAssumeRoleWithWebIdentityResponse(resp->body);
  if (!creds.ok()) return creds.status();
  creds->source = "web identity (STS AssumeRoleWithWebIdentity)";
  if (creds->identity.empty()) creds->identity = role_arn;
  return creds;
}

Result<Credentials> FetchContainerCredentials(const ChainOptions& opts) {
  const Environment& env = *opts.env;
  std::string url;
  if (auto rel = env.Get("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")) {
    url = "http://169.254.170.2" + *rel;
  } else {
    url = env.GetOr("AWS_CONTAINER_CREDENTIALS_FULL_URI", "");
  }
  http::Request req{.method = "GET", .url = url};
  std::string token;
  if (auto file = env.Get("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE")) {
    FERRY_ASSIGN_OR_RETURN(token, ReadSmallFile(*file, "container authorization token file"));
  } else {
    token = env.GetOr("AWS_CONTAINER_AUTHORIZATION_TOKEN", "");
  }
  if (!token.empty()) {
    RegisterSecret(token);
    req.headers.push_back({"Authorization", token});
  }
  auto resp = SendWithRetry(*opts.http, req, 3);
  std::string what = "container credentials endpoint " + http::DisplayUrl(url);
  if (!resp.ok()) return resp.status().WithContext(what);
  if (!resp->ok()) return HttpFailure(what, *resp);
  return ParseJsonCredentials(resp->body, "container credentials endpoint");
}

Result<Credentials> FetchImdsCredentials(const ChainOptions& opts) {
  std::string base = opts.env->GetOr("AWS_EC2_METADATA_SERVICE_ENDPOINT", "http://169.254.169.254");
  while (!base.empty() && base.back() == '/') base.pop_back();
  http::Client& client = *opts.http;
  auto token = client.Send({.method = "PUT",
                            .url = base + "/latest/api/token",
                            .headers = {{"X-aws-ec2-metadata-token-ttl-seconds", "21600"}},
                            .send_body = true});
  if (!token.ok()) return token.status().WithContext("instance metadata service");
  if (!token->ok()) return HttpFailure("instance metadata token request", *token);
  std::string tok(Trim(token->body));
  RegisterSecret(tok);
  http::Headers auth = {{"X-aws-ec2-metadata-token", tok}};
  std::string path = base + "/latest/meta-data/iam/security-credentials/";
  auto role = client.Send({.method = "GET", .url = path, .headers = auth});
  if (!role.ok()) return role.status().WithContext("instance metadata service");
  if (!role->ok()) return HttpFailure("instance metadata role lookup", *role);
  std::string name(Trim(Split(role->body, '\n')[0]));
  if (name.empty()) {
    return Status(StatusCode::kUnauthenticated, "instance has no IAM role attached");
  }
  auto creds = client.Send({.method = "GET", .url = path + name, .headers = auth});
  if (!creds.ok()) return creds.status().WithContext("instance metadata service");
  if (!creds->ok()) return HttpFailure("instance metadata credentials", *creds);
  auto c = ParseJsonCredentials(creds->body, "EC2 instance metadata (IMDSv2)");
  if (c.ok() && c->identity.empty()) c->identity = "instance role " + name;
  return c;
}

}  // namespace ferry::aws
