#pragma once
// The HTTP answer for a cached blob, shared by the Hugging Face and PyPI handlers: status
// (200, 206, 416), Content-Length, Content-Range, Accept-Ranges, and a body streamed from the
// cache (BlobCache::Open) as bytes arrive. A HEAD is answered from the size alone, without
// opening the blob (no upstream fetch). The body source passes BlobReader errors on, so the
// server aborts the response: a client never receives a truncated or unverified blob as
// complete (BlobReader withholds the last byte until the blob is verified).

#include <cstdint>
#include <memory>

#include "proxy/blob_cache.h"
#include "server/http_types.h"

namespace ferry::proxy {

// A BodySource over a BlobReader.
std::unique_ptr<server::BodySource> BlobBody(std::unique_ptr<BlobReader> reader);

// Answers `request` (GET or HEAD, with its Range header) for the blob `digest` of `size` bytes,
// fetched by `fetcher` when it is not cached. `headers` are added to the answer. Errors
// opening the blob become error answers (HttpStatusFor; upstream errors as 502/504, see
// UpstreamStatusFor).
server::Response ServeBlob(BlobCache& cache, const Digest& digest, uint64_t size,
                           std::shared_ptr<Fetcher> fetcher, const server::Request& request,
                           server::Headers headers);

// The status a proxy answers when it could not get something from upstream: 504 for a timeout
// or stall, 502 for everything else that went wrong upstream (unreachable, 5xx, a corrupt or
// truncated body). Never 404: a client may remember a 404 as "this file does not exist".
int UpstreamStatusFor(const Status& status);

}  // namespace ferry::proxy
