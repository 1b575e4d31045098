#include "base/sha256_ni.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace ferry {

#if defined(__x86_64__)
namespace {

alignas(16) constexpr uint32_t kRoundConstants[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

using State = std::array<uint32_t, 8>;
constexpr State kInitialState = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

// Runs `blocks` 64-byte blocks of each of N messages through its state, the N streams' rounds
// interleaved. The SHA-NI layout (Intel's "SHA extensions" paper): the state as ABEF and CDGH
// words, four message words per schedule step, two rounds per sha256rnds2.
template <int N>
__attribute__((target("sha,sse4.1,ssse3"))) void Blocks(State* const* states,
                                                        const uint8_t* const* data, size_t blocks) {
  const __m128i byte_swap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
  __m128i abef[N], cdgh[N];
  for (int l = 0; l < N; ++l) {
    __m128i dcba = _mm_shuffle_epi32(
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(states[l]->data())), 0xB1);
    __m128i efgh = _mm_shuffle_epi32(
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(states[l]->data() + 4)), 0x1B);
    abef[l] = _mm_alignr_epi8(dcba, efgh, 8);
    cdgh[l] = _mm_blend_epi16(efgh, dcba, 0xF0);
  }
  for (size_t b = 0; b < blocks; ++b) {
    __m128i abef_in[N], cdgh_in[N], w[N][4];
    for (int l = 0; l < N; ++l) {
      abef_in[l] = abef[l];
      cdgh_in[l] = cdgh[l];
    }
#pragma GCC unroll 16
    for (int i = 0; i < 16; ++i) {
      const __m128i k = _mm_load_si128(reinterpret_cast<const __m128i*>(&kRoundConstants[i * 4]));
#pragma GCC unroll 4
      for (int l = 0; l < N; ++l) {
        __m128i m;
        if (i < 4) {
          m = _mm_shuffle_epi8(
              _mm_loadu_si128(reinterpret_cast<const __m128i*>(data[l] + b * 64 + i * 16)),
              byte_swap);
        } else {
          __m128i t = _mm_add_epi32(_mm_sha256msg1_epu32(w[l][i & 3], w[l][(i + 1) & 3]),
                                    _mm_alignr_epi8(w[l][(i + 3) & 3], w[l][(i + 2) & 3], 4));
          m = _mm_sha256msg2_epu32(t, w[l][(i + 3) & 3]);
        }
        w[l][i & 3] = m;
        const __m128i mk = _mm_add_epi32(m, k);
        cdgh[l] = _mm_sha256rnds2_epu32(cdgh[l], abef[l], mk);
        abef[l] = _mm_sha256rnds2_epu32(abef[l], cdgh[l], _mm_shuffle_epi32(mk, 0x0E));
      }
    }
    for (int l = 0; l < N; ++l) {
      abef[l] = _mm_add_epi32(abef[l], abef_in[l]);
      cdgh[l] = _mm_add_epi32(cdgh[l], cdgh_in[l]);
    }
  }
  for (int l = 0; l < N; ++l) {
    __m128i feba = _mm_shuffle_epi32(abef[l], 0x1B);
    __m128i dchg = _mm_shuffle_epi32(cdgh[l], 0xB1);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(states[l]->data()),
                     _mm_blend_epi16(feba, dchg, 0xF0));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(states[l]->data() + 4),
                     _mm_alignr_epi8(dchg, feba, 8));
  }
}

template <int N>
void Interleaved(State* const* states, const uint8_t* const* data, size_t blocks) {
  if (blocks > 0) Blocks<N>(states, data, blocks);
}

// The last one or two blocks of `m`: its final size % 64 bytes, 0x80, zeros, the bit length.
size_t PaddedTail(std::string_view m, std::array<uint8_t, 128>& tail) {
  const size_t rest = m.size() % 64;
  tail.fill(0);
  if (rest > 0) std::memcpy(tail.data(), m.data() + m.size() - rest, rest);
  tail[rest] = 0x80;
  const size_t blocks = rest + 9 <= 64 ? 1 : 2;
  const uint64_t bits = static_cast<uint64_t>(m.size()) * 8;
  for (size_t i = 0; i < 8; ++i) tail[blocks * 64 - 1 - i] = static_cast<uint8_t>(bits >> (8 * i));
  return blocks;
}

// Up to four messages: their common whole blocks interleaved, then each one's rest alone.
void Group(std::span<const std::string_view> messages, std::span<Sha256Digest> out) {
  const size_t n = messages.size();
  std::array<State, 4> states{};
  State* state_ptrs[4] = {};
  const uint8_t* data[4] = {};
  size_t common = SIZE_MAX;
  for (size_t i = 0; i < n; ++i) {
    states[i] = kInitialState;
    state_ptrs[i] = &states[i];
    data[i] = reinterpret_cast<const uint8_t*>(messages[i].data());
    common = std::min(common, messages[i].size() / 64);
  }
  switch (n) {
    case 4:
      Interleaved<4>(state_ptrs, data, common);
      break;
    case 3:
      Interleaved<3>(state_ptrs, data, common);
      break;
    case 2:
      Interleaved<2>(state_ptrs, data, common);
      break;
    default:
      Interleaved<1>(state_ptrs, data, common);
      break;
  }
  for (size_t i = 0; i < n; ++i) {
    const uint8_t* rest = data[i] + common * 64;
    Interleaved<1>(&state_ptrs[i], &rest, messages[i].size() / 64 - common);
    std::array<uint8_t, 128> tail;
    const size_t tail_blocks = PaddedTail(messages[i], tail);
    const uint8_t* tail_data = tail.data();
    Interleaved<1>(&state_ptrs[i], &tail_data, tail_blocks);
    for (size_t word = 0; word < 8; ++word) {
      for (size_t byte = 0; byte < 4; ++byte) {
        out[i][word * 4 + byte] = static_cast<uint8_t>(states[i][word] >> (24 - 8 * byte));
      }
    }
  }
}

}  // namespace

bool HaveSha256Ni() {
  unsigned int eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return false;
  const bool ssse3_sse41 = (ecx & (1u << 9)) != 0 && (ecx & (1u << 19)) != 0;
  return ssse3_sse41 && Sha256IsHardwareAccelerated();  // base/hash.h: the SHA extensions
}

void Sha256NiEach(std::span<const std::string_view> messages, std::span<Sha256Digest> out) {
  for (size_t i = 0; i < messages.size(); i += 4) {
    const size_t n = std::min<size_t>(4, messages.size() - i);
    Group(messages.subspan(i, n), out.subspan(i, n));
  }
}

#else  // not x86-64

bool HaveSha256Ni() { return false; }

void Sha256NiEach(std::span<const std::string_view> messages, std::span<Sha256Digest> out) {
  for (size_t i = 0; i < messages.size(); ++i) out[i] = Sha256(messages[i]);
}

#endif

}  // namespace ferry
