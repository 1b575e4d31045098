#pragma once
// GET and HEAD of one artifact: a 200 with the whole object or a 206 for one `Range:
// bytes=...` (first-last, first-, -suffix; several ranges or a malformed header: the whole
// object; a start past the end: 416 with Content-Range bytes */SIZE), streamed from the store
// through a bounded buffer (house style 27): the store's push-style Read() runs on a thread of
// its own and hands chunks to the server's pulls, at most kQueuedChunks of them waiting.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "server/http_types.h"
#include "storage/store.h"

namespace ferry::tracker::artifacts {

struct ByteSpan {
  uint64_t first = 0, last = 0;  // inclusive
};
// nullopt: answer the whole object. `*unsatisfiable` is set for a range past the end.
std::optional<ByteSpan> ParseRangeHeader(std::optional<std::string_view> header, uint64_t size,
                                         bool* unsatisfiable);

// A BodySource over store.Read(key, range). The read starts on the first pull; destroying or
// cancelling the source stops it.
std::unique_ptr<server::BodySource> StoreBody(std::shared_ptr<storage::Store> store,
                                              std::string key,
                                              std::optional<storage::ByteRange> range);

// The answer to GET/HEAD `request` for the object `key` (404 when it is missing).
server::Response ServeObject(std::shared_ptr<storage::Store> store, const std::string& key,
                             const server::Request& request);

}  // namespace ferry::tracker::artifacts
