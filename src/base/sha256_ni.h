#pragma once
// SHA-256 with the x86 SHA extensions (SHA-NI), several messages interleaved in one thread. One
// SHA-NI stream waits on each round's result; four independent streams keep the unit busy: on
// the EPYC this was measured on, 2.4-2.6 GB/s for four streams against 1.5-1.6 GB/s for one
// (OpenSSL's SHA-256 is one such stream). For long messages (multipart upload parts) that are
// hashed before they are sent: base/sha256_lanes.h takes the short ones.

#include <span>
#include <string_view>

#include "base/hash.h"

namespace ferry {

// Whether this CPU has the SHA extensions (with SSSE3 and SSE4.1, which the code also uses).
bool HaveSha256Ni();

// Writes the digest of messages[i] to out[i] (same sizes), up to four messages at a time.
// Requires HaveSha256Ni().
void Sha256NiEach(std::span<const std::string_view> messages, std::span<Sha256Digest> out);

}  // namespace ferry
