#pragma once
// Passing an upstream file to the client without caching it: for files an index lists without
// a sha256 ("nohash"), which cannot be verified and so are never stored. A background thread
// runs the upstream GET and hands its body through a bounded buffer to the server, which pulls
// it (BodySource); a slow client stops the upstream read, a client gone cancels it. The answer
// is whole (200, no ranges); an upstream failure before the first byte becomes 502/504, one
// after it aborts the response (the client sees a truncated body, never a wrong one).

#include <memory>
#include <string>

#include "proxy/upstream/upstream_client.h"
#include "server/http_types.h"

namespace ferry::proxy::pypi {

// Bytes buffered between upstream and the client.
inline constexpr size_t kStreamBuffer = 1u << 20;

// GETs `url` (redirects followed) and answers with its body and Content-Length when upstream
// gave one; `headers` are added to a 200 answer. A HEAD `method` sends a HEAD upstream.
server::Response StreamFromUpstream(std::shared_ptr<UpstreamClient> client, std::string url,
                                    const std::string& method, server::Headers headers);

}  // namespace ferry::proxy::pypi
