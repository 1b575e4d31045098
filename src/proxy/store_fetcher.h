#pragma once
// StoreFetcher: a Fetcher over an object of any storage::Store, so an upstream reachable as a
// store (an https:// file host through the web store, another S3 bucket, a local mirror) fills
// the cache without code of its own. Ranged reads resume inside the store (Store::Read retries
// transient faults); what still fails is passed on with its code, so IsRetryable() errors are
// resumed by the cache as well.

#include <memory>
#include <string>

#include "proxy/fetcher.h"
#include "storage/store.h"

namespace ferry::proxy {

class StoreFetcher final : public Fetcher {
 public:
  StoreFetcher(std::shared_ptr<storage::Store> store, std::string key)
      : store_(std::move(store)), key_(std::move(key)) {}

  Status Fetch(const storage::ByteRange& range, const storage::ByteSink& sink) override {
    storage::ReadOptions options;
    options.range = range;
    return store_->Read(key_, options, sink);
  }
  std::string Describe() const override { return store_->UrlFor(key_); }

 private:
  std::shared_ptr<storage::Store> store_;
  std::string key_;
};

}  // namespace ferry::proxy
