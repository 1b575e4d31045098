#include "proxy/service/byte_range.h"

#include <charconv>

#include "base/strings.h"

namespace ferry::proxy {

namespace {

std::optional<uint64_t> Number(std::string_view s) {
  s = Trim(s);
  if (s.empty()) return std::nullopt;
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

RangeAnswer ParseRange(std::optional<std::string_view> header, uint64_t size) {
  RangeAnswer whole;
  if (!header) return whole;
  std::string_view h = Trim(*header);
  if (h.size() < 6) return whole;
  // The unit is case-insensitive.
  std::string unit(h.substr(0, 6));
  for (char& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (unit != "bytes=") return whole;
  std::string_view spec = Trim(h.substr(6));
  if (spec.find(',') != std::string_view::npos) return whole;  // several ranges: whole file
  size_t dash = spec.find('-');
  if (dash == std::string_view::npos) return whole;
  std::string_view a = Trim(spec.substr(0, dash)), b = Trim(spec.substr(dash + 1));
  RangeAnswer r;
  if (a.empty()) {  // suffix: the last K bytes
    auto k = Number(b);
    if (!k) return whole;
    if (*k == 0 || size == 0) return {RangeAnswer::kUnsatisfiable};
    r.kind = RangeAnswer::kPartial;
    r.first = *k >= size ? 0 : size - *k;
    r.last = size - 1;
    return r;
  }
  auto first = Number(a);
  if (!first) return whole;
  std::optional<uint64_t> last;
  if (!b.empty()) {
    last = Number(b);
    if (!last || *last < *first) return whole;
  }
  if (*first >= size) return {RangeAnswer::kUnsatisfiable};
  r.kind = RangeAnswer::kPartial;
  r.first = *first;
  r.last = last ? std::min(*last, size - 1) : size - 1;
  return r;
}

std::string ContentRangeValue(const RangeAnswer& range, uint64_t size) {
  if (range.kind == RangeAnswer::kPartial) {
    return "bytes " + std::to_string(range.first) + "-" + std::to_string(range.last) + "/" +
           std::to_string(size);
  }
  return "bytes */" + std::to_string(size);
}

}  // namespace ferry::proxy
