#pragma once
// Heap buffers at an alignment (page-aligned memory for O_DIRECT writes: storage/local).

#include <cstddef>
#include <cstdlib>
#include <memory>

namespace ferry {

struct AlignedFree {
  void operator()(char* p) const { std::free(p); }
};
using AlignedBuffer = std::unique_ptr<char, AlignedFree>;

// `size` bytes (rounded up to `align`, a power of two) at an `align` boundary; null when out of
// memory.
inline AlignedBuffer NewAlignedBuffer(size_t size, size_t align = 4096) {
  size_t rounded = (size + align - 1) & ~(align - 1);
  return AlignedBuffer(static_cast<char*>(std::aligned_alloc(align, rounded)));
}

}  // namespace ferry
