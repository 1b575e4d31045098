#include "aws/credential_chain.h"

#include <functional>

#include "aws/shared_config.h"
#include "base/log.h"
#include "base/mutex.h"
#include "base/redact.h"
#include "base/strings.h"
#include "http/http_client.h"

namespace ferry::aws {

namespace {

using FetchFn = std::function<Result<Credentials>()>;

Status NoCredentials(std::string why) {
  return Status(StatusCode::kUnauthenticated, std::move(why));
}

// Caches what `fetch` returns and fetches again `margin` before expiry.
class RefreshingProvider final : public CredentialsProvider {
 public:
  RefreshingProvider(FetchFn fetch, std::chrono::seconds margin)
      : fetch_(std::move(fetch)), margin_(margin) {}

  Result<Credentials> GetCredentials() override {
    // One refresh at a time; callers wait for it instead of each fetching.
    MutexLock lock(mu_);
    auto now = std::chrono::system_clock::now();
    if (cached_ && (!cached_->expiration || *cached_->expiration - margin_ > now)) {
      return *cached_;
    }
    auto fresh = fetch_();
    if (!fresh.ok()) {
      // Keep using credentials that are still valid if a refresh fails.
      if (cached_ && cached_->expiration && *cached_->expiration > now) {
        Log(LogLevel::kWarn, "credential refresh failed, using current credentials: {}",
            fresh.status().message());
        return *cached_;
      }
      return fresh.status();
    }
    RegisterSecret(fresh->secret_access_key);
    RegisterSecret(fresh->session_token);
    cached_ = *fresh;
    return *cached_;
  }

 private:
  Mutex mu_;
  FetchFn fetch_;
  std::chrono::seconds margin_;
  std::optional<Credentials> cached_ GUARDED_BY(mu_);
};

// Picks the first configured source. Returns the fetch function for it.
Result<FetchFn> SelectSource(std::shared_ptr<ChainOptions> opts) {
  const Environment& env = *opts->env;
  SharedConfig cfg = LoadSharedConfig(env, opts->profile);
  const bool own = opts->profile_first && cfg.profile_found &&
                   (cfg.Get("aws_access_key_id") || cfg.Get("aws_secret_access_key") ||
                    cfg.Get("web_identity_token_file"));
  if (!own && (env.Get("AWS_ACCESS_KEY_ID") || env.Get("AWS_SECRET_ACCESS_KEY"))) {
    auto env_ptr = opts->env;
    return FetchFn([env_ptr] { return FetchEnvironmentCredentials(*env_ptr); });
  }
  if (Status found = cfg.CheckFound(); !found.ok()) return NoCredentials(found.message());
  std::string token_file = env.Get("AWS_WEB_IDENTITY_TOKEN_FILE")
                               .value_or(cfg.Get("web_identity_token_file").value_or(""));
  std::string role_arn = env.Get("AWS_ROLE_ARN").value_or(cfg.Get("role_arn").value_or(""));
  if (own && cfg.Get("web_identity_token_file")) {
    token_file = *cfg.Get("web_identity_token_file");
    role_arn = cfg.Get("role_arn").value_or("");
  }
  const bool own_keys = own && !cfg.Get("web_identity_token_file");
  if (!own_keys && !token_file.empty() && !role_arn.empty()) {
    std::string session = env.Get("AWS_ROLE_SESSION_NAME")
                              .value_or(cfg.Get("role_session_name").value_or("ferry-session"));
    return FetchFn([opts, token_file, role_arn, session] {
      return FetchWebIdentityCredentials(*opts, token_file, role_arn, session);
    });
  }
  if (cfg.Get("aws_access_key_id") || cfg.Get("aws_secret_access_key")) {
    auto id = cfg.Get("aws_access_key_id"), secret = cfg.Get("aws_secret_access_key");
    if (!id || !secret) {
      return NoCredentials("AWS profile '" + cfg.profile_name +
                           "' has only one of aws_access_key_id and aws_secret_access_key");
    }
    Credentials c{.access_key_id = *id,
                  .secret_access_key = *secret,
                  .session_token = cfg.Get("aws_session_token").value_or(""),
                  .source = "shared config profile '" + cfg.profile_name + "'",
                  .identity = "profile " + cfg.profile_name};
    return FetchFn([c] { return Result<Credentials>(c); });
  }
  if (cfg.Get("role_arn") && cfg.Get("source_profile")) {
    return Unimplemented("AWS profile '" + cfg.profile_name +
                         "' assumes a role with source_profile, which Ferry does not support "
                         "yet; export the role's credentials instead");
  }
  if (env.Get("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI") ||
      env.Get("AWS_CONTAINER_CREDENTIALS_FULL_URI")) {
    return FetchFn([opts] { return FetchContainerCredentials(*opts); });
  }
  std::string disabled = ToLower(env.GetOr("AWS_EC2_METADATA_DISABLED", ""));
  if (disabled != "true") {
    auto probe = FetchImdsCredentials(*opts);
    if (probe.ok()) {
      auto first = std::make_shared<std::optional<Credentials>>(*probe);
      return FetchFn([opts, first]() -> Result<Credentials> {
        if (*first) {
          Credentials c = **first;
          first->reset();
          return c;
        }
        return FetchImdsCredentials(*opts);
      });
    }
    Log(LogLevel::kDebug, "instance metadata credentials unavailable: {}",
        probe.status().message());
  }
  return NoCredentials(
      "no AWS credentials found (looked at AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, web identity, "
      "profile '" +
      cfg.profile_name +
      "', container and instance metadata); set them, or pass "
      "--no-sign-request for public buckets");
}

// Resolves the chain on first use, then delegates to a refreshing provider.
class LazyChainProvider final : public CredentialsProvider {
 public:
  explicit LazyChainProvider(ChainOptions options)
      : opts_(std::make_shared<ChainOptions>(std::move(options))) {}

  Result<Credentials> GetCredentials() override {
    std::shared_ptr<CredentialsProvider> resolved;
    {
      MutexLock lock(mu_);
      if (!resolved_) {
        if (opts_->anonymous) {
          resolved_ = std::make_shared<StaticCredentialsProvider>(
              Credentials{.source = "anonymous", .anonymous = true});
        } else {
          if (!opts_->http) {
            opts_->http = std::make_shared<http::Client>(
                http::ClientOptions{.connect_timeout = opts_->metadata_timeout,
                                    .total_timeout = std::chrono::milliseconds(10000)});
          }
          auto fetch = SelectSource(opts_);
          if (!fetch.ok()) return fetch.status();
          resolved_ = std::make_shared<RefreshingProvider>(*fetch, opts_->refresh_margin);
        }
      }
      resolved = resolved_;
    }
    return resolved->GetCredentials();
  }

 private:
  Mutex mu_;
  std::shared_ptr<ChainOptions> opts_;  // its http client is made under mu_
  std::shared_ptr<CredentialsProvider> resolved_ GUARDED_BY(mu_);
};

}  // namespace

std::shared_ptr<CredentialsProvider> MakeDefaultCredentialsChain(ChainOptions options) {
  return std::make_shared<LazyChainProvider>(std::move(options));
}

Result<Credentials> FetchEnvironmentCredentials(const Environment& env) {
  auto id = env.Get("AWS_ACCESS_KEY_ID");
  auto secret = env.Get("AWS_SECRET_ACCESS_KEY");
  if (!id || !secret) {
    return NoCredentials(
        std::string(id ? "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not"
                       : "AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not"));
  }
  return Credentials{.access_key_id = *id,
                     .secret_access_key = *secret,
                     .session_token = env.GetOr("AWS_SESSION_TOKEN", ""),
                     .source = "environment variables"};
}

}  // namespace ferry::aws
