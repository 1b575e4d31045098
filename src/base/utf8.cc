#include "base/utf8.h"

#include <cstdint>

namespace ferry {

bool IsUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    auto byte = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
    uint8_t c = byte(i);
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t n = 0;
    uint8_t lo = 0x80, hi = 0xBF;  // the range of the second byte
    if (c >= 0xC2 && c <= 0xDF) {
      n = 1;
    } else if (c >= 0xE0 && c <= 0xEF) {
      n = 2;
      if (c == 0xE0) lo = 0xA0;  // overlong
      if (c == 0xED) hi = 0x9F;  // surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
      n = 3;
      if (c == 0xF0) lo = 0x90;  // overlong
      if (c == 0xF4) hi = 0x8F;  // past U+10FFFF
    } else {
      return false;
    }
    if (i + n >= s.size()) return false;  // cut short
    if (byte(i + 1) < lo || byte(i + 1) > hi) return false;
    for (size_t k = 2; k <= n; ++k) {
      if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return false;
    }
    i += n + 1;
  }
  return true;
}

}  // namespace ferry
