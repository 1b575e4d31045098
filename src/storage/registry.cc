#include "storage/registry.h"

#include "base/log.h"

namespace ferry::storage {

std::string_view SchemeName(Scheme scheme) {
  switch (scheme) {
    case Scheme::kLocal:
      return "file";
    case Scheme::kS3:
      return "s3";
    case Scheme::kHttp:
      return "http";
    case Scheme::kHttps:
      return "https";
  }
  return "?";
}

std::string LegacyParameterHint(const ParsedUrl& url) {
  if (url.scheme != Scheme::kS3) return "";
  for (const char* name : {"access_key", "secret_key", "session_token"}) {
    for (char sep : {'?', '&'}) {
      std::string param = sep + std::string(name) + "=";
      if (url.key.find(param) == std::string::npos) continue;
      // The key is not repeated: what follows '=' may be a secret.
      return "an S3 key holds '" + param +
             "', which is part of the key: credentials are never taken from URLs or "
             "arguments; set AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or use a profile";
    }
  }
  for (const char* name : {"endpoint", "region", "addressing", "profile", "anonymous"}) {
    for (char sep : {'?', '&'}) {
      std::string param = sep + std::string(name) + "=";
      if (url.key.find(param) == std::string::npos) continue;
      return "the key '" + url.key + "' holds '" + param +
             "', which is part of the key: S3 keys are literal; for the old URL parameter use " +
             "--endpoint-url, --region, --profile, --no-sign-request or PROFILE:s3://... " +
             "(README, Release notes)";
    }
  }
  return "";
}

void StoreRegistry::Register(Scheme scheme, Factory factory) {
  MutexLock lock(mu_);
  factories_[scheme] = std::move(factory);
}

Result<OpenedUrl> StoreRegistry::Open(std::string_view url, std::string_view cwd) {
  FERRY_ASSIGN_OR_RETURN(ParsedUrl parsed, ParseUrl(url, cwd));
  std::string cache_key = std::string(SchemeName(parsed.scheme)) + "://" + parsed.bucket;
  if (!parsed.profile.empty()) cache_key = parsed.profile + ":" + cache_key;
  if (!parsed.query.empty()) cache_key += "?" + parsed.query;  // http(s): one store per query
  MutexLock lock(mu_);
  if (std::string hint = LegacyParameterHint(parsed);
      !hint.empty() && warned_.insert(hint).second) {
    Log(LogLevel::kWarn, "{}", hint);
  }
  auto f = factories_.find(parsed.scheme);
  if (f == factories_.end()) {
    return Unimplemented("ferry was built without " + std::string(SchemeName(parsed.scheme)) +
                         " support");
  }
  auto& store = cache_[cache_key];
  if (!store) {
    auto made = f->second(parsed);
    if (!made.ok()) {
      cache_.erase(cache_key);
      return made.status();
    }
    store = *made;
  }
  return OpenedUrl{.store = store, .key = parsed.key, .url = std::move(parsed)};
}

}  // namespace ferry::storage
