#pragma once
// Turns URLs into (store, key) pairs. Backends are registered explicitly by the composition root
// (see backends.h), so a backend left out of a build reports "built without X support" instead
// of disappearing silently.

#include <functional>
#include <map>
#include <memory>
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

  // Parses `url` and returns its store (one shared instance per scheme, bucket and parameters)
  // and key.
  Result<OpenedUrl> Open(std::string_view url, std::string_view cwd = {});

 private:
  Mutex mu_;
  std::map<Scheme, Factory> factories_ GUARDED_BY(mu_);
  std::map<std::string, std::shared_ptr<Store>> cache_ GUARDED_BY(mu_);
};

std::string_view SchemeName(Scheme scheme);

}  // namespace ferry::storage
