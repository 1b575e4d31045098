#pragma once
// The read-only http(s) backend: Stat via HEAD, ranged and resumable GET. Keys are the URL's
// path after "scheme://host/"; the store's query (a presigned URL's signature, a token) is sent
// with every request and never appears in a key, a URL it shows or a message. Writing, listing
// and deleting fail with kUnimplemented.

#include <memory>
#include <string>

#include "base/retry.h"
#include "storage/store.h"

namespace ferry::http {
class Client;
}

namespace ferry::storage {

struct HttpStoreOptions {
  std::string origin;  // "https://host[:port]"
  std::string query;   // sent with every request ("" = none); never shown
  std::shared_ptr<http::Client> http;
  RetryPolicy retry;
};

std::shared_ptr<Store> MakeHttpStore(HttpStoreOptions options);

}  // namespace ferry::storage
