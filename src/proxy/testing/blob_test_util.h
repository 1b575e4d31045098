#pragma once
// Helpers shared by the proxy tests: blob contents, their digests, draining a reader.

#include <memory>
#include <random>
#include <string>

#include "proxy/blob_reader.h"
#include "proxy/digest.h"

namespace ferry::proxy::testing {

inline std::string RandomBytes(size_t n, uint32_t seed = 1) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng() & 0xff);
  return s;
}

inline Digest DigestOf(std::string_view data,
                       DigestAlgorithm algorithm = DigestAlgorithm::kSha256) {
  BlobHasher h(algorithm, data.size());
  h.Update(data);
  return h.Finish();
}

// Reads a reader to its end, `step` bytes at a time.
inline Result<std::string> Drain(BlobReader& reader, size_t step = 7000) {
  std::string out;
  std::string buf(step, '\0');
  while (true) {
    FERRY_ASSIGN_OR_RETURN(size_t n, reader.Read(buf.data(), buf.size()));
    if (n == 0) return out;
    out.append(buf.data(), n);
  }
}

// Drain() of an open's reader, or "<error: ...>" (for threads in tests).
inline std::string DrainOrError(Result<std::unique_ptr<BlobReader>> reader) {
  if (!reader.ok()) return "<error: " + reader.status().ToString() + ">";
  auto got = Drain(**reader);
  return got.ok() ? *got : "<error: " + got.status().ToString() + ">";
}

}  // namespace ferry::proxy::testing
