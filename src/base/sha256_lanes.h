#pragma once
// SHA-256 of many independent messages at once: with Intel's multi-buffer library (libipsec-mb,
// Debian's libipsec-mb-dev; behind this file alone) up to 16 messages are hashed side by side in
// the lanes of AVX-512 (or 8 of AVX2) registers, 2.8x the throughput of one SHA-NI stream on the
// EPYC this was measured on (5.5-6.0 vs 2.1 GB/s, 32-64 KiB messages). Messages the library
// refuses (longer than kSha256LaneMaxMessage: multipart upload parts) or all of them without it
// go four at a time through interleaved SHA-NI streams (base/sha256_ni.h; 1.6x one stream), or
// one by one through OpenSSL on CPUs without SHA-NI; the digests are the same either way.
//
// The messages must be independent: SigV4's chunked uploads (aws/sigv4.h) hash each 64 KiB
// chunk of a part on its own, which is what makes a part's payload hash parallel.
//
// Thread-safe: each thread uses its own multi-buffer manager.

#include <span>
#include <string_view>
#include <vector>

#include "base/hash.h"

namespace ferry {

// The largest message the lanes take (longer ones go through SHA-NI or OpenSSL): libipsec-mb 1.3
// refuses SHA-256 jobs of 65,535 bytes and more. A refused job is hashed that way too.
inline constexpr size_t kSha256LaneMaxMessage = 65534;

// Digests of `messages`, in order.
std::vector<Sha256Digest> Sha256Each(std::span<const std::string_view> messages);

// Whether Sha256Each uses several lanes on this machine (the library is built in and found a
// SIMD implementation): "avx512", "avx2", ... or "" when it hashes one by one.
std::string_view Sha256LanesKind();

}  // namespace ferry
