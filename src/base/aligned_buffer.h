#pragma once
// Heap buffers at an alignment (page-aligned memory for O_DIRECT writes: storage/local), and
// huge-page advice for large buffers (the copy engine's parts).

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
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

// Asks the kernel to back the whole 2 MiB pages inside [p, p+n) with transparent huge pages
// (THP "madvise" mode, Debian's default): a large buffer filled once then costs a fault per
// 2 MiB instead of one per 4 KiB. Advice only: nothing changes where THP is off.
inline void AdviseHugePages(void* p, size_t n) {
  constexpr uintptr_t kPage = 4096;
  uintptr_t start = (reinterpret_cast<uintptr_t>(p) + kPage - 1) & ~(kPage - 1);
  uintptr_t end = (reinterpret_cast<uintptr_t>(p) + n) & ~(kPage - 1);
  if (end > start) ::madvise(reinterpret_cast<void*>(start), end - start, MADV_HUGEPAGE);
}

}  // namespace ferry
