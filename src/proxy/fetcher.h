#pragma once
// Fetcher: what the cache needs from an upstream (the Hub, PyPI's file host) to fill one blob.
// The HTTP client module implements it with ranged GETs; tests use testing/fake_fetcher.h.

#include <string>

#include "storage/store.h"

namespace ferry::proxy {

class Fetcher {
 public:
  virtual ~Fetcher() = default;

  // Streams bytes [range.offset, range.offset + *range.length) of the upstream file (to the end
  // when length is nullopt) to `sink`, in order, each byte once. A non-OK status from the sink
  // stops the fetch and is returned. Errors: IsRetryable() ones (connection reset, 5xx, a
  // stall the client's own low-speed limit detected) make the cache call Fetch() again from the
  // first byte it has not received; any other code is final. Returning OK after fewer bytes
  // than asked for is a truncation (the cache reports kDataLoss). A Fetch() must not block
  // forever: the implementation bounds its stalls (http::ClientOptions::low_speed_limit).
  // Thread-safety: called concurrently (the filling fetch and direct range reads).
  virtual Status Fetch(const storage::ByteRange& range, const storage::ByteSink& sink) = 0;

  // The upstream location, for messages ("https://huggingface.co/.../model.safetensors").
  virtual std::string Describe() const = 0;

  // Whether a request whose fetcher this is may be served the cached bytes: stored ones
  // (`filling` null) or those a fill by `filling` is receiving. The cache is content-addressed;
  // a source whose bytes are not public overrides this (the Hub's gated repos: hf_access.h).
  // Default: any. Called with the cache's lock held: must not block.
  virtual bool MayServe(const Fetcher* filling) const {
    (void)filling;
    return true;
  }
};

}  // namespace ferry::proxy
