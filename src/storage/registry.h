#pragma once
// Turns URLs into (store, key) pairs. Backends are registered explicitly by the composition root
// (see backends.h), so a backend left out of a build reports "built without X support" instead
// of disappearing silently.

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "base/mutex.h"
#include "storage/store.h"
#include "storage/url.h"

namespace ferry::storage {

struct OpenedUrl {
  std::shared_ptr<Store> store;
  std::string key;
  ParsedUrl url;
};

class StoreRegistry final {
 public:
  using Factory = std::function<Result<std::shared_ptr<Store>>(const ParsedUrl&)>;

  void Register(Scheme scheme, Factory factory);

  // Parses `url` and returns its store (one shared instance per scheme, bucket and profile
  // prefix; per query for http(s)) and key. An s3 key that looks like an old URL parameter
  // ("k?endpoint=...") is used as written, with one warning (LegacyParameterHint).
  Result<OpenedUrl> Open(std::string_view url, std::string_view cwd = {});

 private:
  Mutex mu_;
  std::map<Scheme, Factory> factories_ GUARDED_BY(mu_);
  std::map<std::string, std::shared_ptr<Store>> cache_ GUARDED_BY(mu_);
  std::set<std::string> warned_ GUARDED_BY(mu_);
};

// A warning for an s3 key holding "?endpoint=", "&region=" and the like (URL parameters before
// keys became literal), or "" when it holds none.
std::string LegacyParameterHint(const ParsedUrl& url);

std::string_view SchemeName(Scheme scheme);

}  // namespace ferry::storage
