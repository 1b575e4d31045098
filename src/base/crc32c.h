#pragma once
// CRC32C (Castagnoli), the full-object checksum Ferry stores with every object it writes.
//
// Computed with ISA-L's SIMD implementation while data streams. Crc32cCombine() joins the CRCs
// of consecutive pieces (zlib's crc32_combine method over GF(2), Castagnoli polynomial), so parts
// transferred in parallel still yield the checksum of the whole object. Value for "123456789" is
// e3069283.

#include <cstdint>
#include <string>
#include <string_view>

namespace ferry {

class Crc32c final {
 public:
  void Update(std::string_view data);
  uint32_t value() const { return state_ ^ 0xffffffffu; }

 private:
  uint32_t state_ = 0xffffffffu;
};

uint32_t Crc32cOf(std::string_view data);

// CRC of A||B from crc(A), crc(B) and len(B).
uint32_t Crc32cCombine(uint32_t crc_a, uint32_t crc_b, uint64_t len_b);

// 8 lower-case hex digits, the form stored in object metadata.
std::string Crc32cHex(uint32_t crc);
bool ParseCrc32cHex(std::string_view hex, uint32_t* out);

}  // namespace ferry
