#pragma once
// HTTP Range requests on a file of known size (RFC 9110 section 14), as the proxies answer them:
// one range only (a multi-range request is answered with the whole file, which RFC 9110
// allows), `bytes=N-`, `bytes=N-M` (M past the end is clamped: huggingface_hub and the npm
// client probe with `bytes=0-0` and resume with `bytes=N-`), `bytes=-K` (the last K bytes: a
// zip reader's tail). A range starting at or past the end is unsatisfiable (416 with
// `Content-Range: bytes */SIZE`). A malformed header or another unit is ignored (200, whole
// file), as RFC 9110 says.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ferry::proxy {

struct RangeAnswer {
  enum Kind { kWhole, kPartial, kUnsatisfiable } kind = kWhole;
  uint64_t first = 0;  // kPartial: first byte
  uint64_t last = 0;   // kPartial: last byte (inclusive)
  uint64_t length() const { return kind == kPartial ? last - first + 1 : 0; }
};

// `header`: the Range header's value, nullopt when absent.
RangeAnswer ParseRange(std::optional<std::string_view> header, uint64_t size);

// "bytes FIRST-LAST/SIZE" for a partial answer, "bytes */SIZE" for a 416.
std::string ContentRangeValue(const RangeAnswer& range, uint64_t size);

}  // namespace ferry::proxy
