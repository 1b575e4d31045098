#include "base/crc32c.h"

#include <isa-l/crc.h>

#include <cstdio>
#include <limits>

namespace ferry {

namespace {

constexpr uint32_t kPolyReflected = 0x82f63b78u;

uint32_t MatrixTimes(const uint32_t* mat, uint32_t vec) {
  uint32_t sum = 0;
  while (vec) {
    if (vec & 1) sum ^= *mat;
    vec >>= 1;
    ++mat;
  }
  return sum;
}

void MatrixSquare(uint32_t* square, const uint32_t* mat) {
  for (int n = 0; n < 32; ++n) square[n] = MatrixTimes(mat, mat[n]);
}

}  // namespace

void Crc32c::Update(std::string_view data) {
  // ISA-L takes an int length; feed large buffers in slices.
  constexpr size_t kSlice = 1u << 30;
  while (!data.empty()) {
    size_t n = std::min(data.size(), kSlice);
    state_ = crc32_iscsi(reinterpret_cast<unsigned char*>(const_cast<char*>(data.data())),
                         static_cast<int>(n), state_);
    data.remove_prefix(n);
  }
}

uint32_t Crc32cOf(std::string_view data) {
  Crc32c c;
  c.Update(data);
  return c.value();
}

uint32_t Crc32cCombine(uint32_t crc1, uint32_t crc2, uint64_t len2) {
  if (len2 == 0) return crc1;
  uint32_t even[32], odd[32];
  odd[0] = kPolyReflected;  // operator for one zero bit
  uint32_t row = 1;
  for (int n = 1; n < 32; ++n) {
    odd[n] = row;
    row <<= 1;
  }
  MatrixSquare(even, odd);  // two zero bits
  MatrixSquare(odd, even);  // four zero bits
  do {
    MatrixSquare(even, odd);
    if (len2 & 1) crc1 = MatrixTimes(even, crc1);
    len2 >>= 1;
    if (len2 == 0) break;
    MatrixSquare(odd, even);
    if (len2 & 1) crc1 = MatrixTimes(odd, crc1);
    len2 >>= 1;
  } while (len2 != 0);
  return crc1 ^ crc2;
}

std::string Crc32cHex(uint32_t crc) {
  char buf[9];
  std::snprintf(buf, sizeof buf, "%08x", crc);
  return buf;
}

bool ParseCrc32cHex(std::string_view hex, uint32_t* out) {
  if (hex.size() != 8) return false;
  uint32_t v = 0;
  for (char c : hex) {
    int d = (c >= '0' && c <= '9') ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;
    if (d < 0) return false;
    v = v << 4 | static_cast<uint32_t>(d);
  }
  *out = v;
  return true;
}

}  // namespace ferry
