#include "mount/kernel_cache.h"

namespace ferry::mount {

OpenCaching KernelCache::OnReadOpen(uint64_t ino, const std::string& etag, uint64_t size,
                                    CacheTicket* ticket) {
  MutexLock lock(mu_);
  State& s = states_[ino];
  OpenCaching c;
  // 3. The kernel's size must be this version's (a version without an ETag: always ask again).
  c.invalidate_attr = etag.empty() || s.attr_etag != etag || s.attr_inflated;
  if (c.invalidate_attr) {
    s.attr_etag.reset();
    s.attr_inflated = false;
  }
  const bool owner = !etag.empty() && s.owner == etag && !s.superseded;
  if (s.cached_opens == 0 || owner) {
    if (!owner) {  // 1. The cache changes hands: the kernel drops every page at this open.
      s.owner = etag;
      s.owner_size = size;
      ++s.owner_gen;
      s.clean = false;
      s.superseded = false;
    }
    ++s.cached_opens;
    c.keep_cache = s.clean;
    *ticket = {.cached = true, .owner_gen = s.owner_gen, .confirms = !c.keep_cache};
    return c;
  }
  // 2. Another version is being read through the cache: read around it, keep its pages. The
  // kernel is about to learn this version's attributes, so the owner's readers are superseded.
  c.direct_io = true;
  c.keep_cache = true;
  s.superseded = true;
  *ticket = {};
  return c;
}

bool KernelCache::OnRead(uint64_t ino, CacheTicket& ticket) {
  if (!ticket.cached) return true;
  MutexLock lock(mu_);
  auto it = states_.find(ino);
  if (it == states_.end()) return true;
  State& s = it->second;
  if (ticket.owner_gen != s.owner_gen || s.superseded) return false;  // 4. and 5.
  if (ticket.confirms) {  // the kernel dropped the old pages inside this descriptor's open()
    s.clean = true;
    ticket.confirms = false;
  }
  return true;
}

bool KernelCache::OnRelease(uint64_t ino, const CacheTicket& ticket) {
  if (!ticket.cached) return false;
  MutexLock lock(mu_);
  auto it = states_.find(ino);
  if (it == states_.end()) return false;
  State& s = it->second;
  if (s.cached_opens > 0) --s.cached_opens;
  if (s.cached_opens == 0 && s.attr_inflated) {
    s.attr_etag.reset();
    s.attr_inflated = false;
    return true;
  }
  return false;
}

void KernelCache::OnAttrReply(uint64_t ino, const std::string& etag, uint64_t& size) {
  MutexLock lock(mu_);
  State& s = states_[ino];
  s.attr_etag = etag;
  s.attr_inflated = false;
  if (s.cached_opens > 0 && s.owner && (*s.owner != etag || etag.empty())) {
    s.superseded = true;  // 4.
    if (s.owner_size > size) {
      size = s.owner_size;
      s.attr_inflated = true;
    }
  }
}

bool KernelCache::MayStore(uint64_t ino, const CacheTicket& ticket) {
  if (!ticket.cached) return false;
  MutexLock lock(mu_);
  auto it = states_.find(ino);
  if (it == states_.end()) return false;
  const State& s = it->second;
  return s.owner && !s.owner->empty() && ticket.owner_gen == s.owner_gen && !s.superseded &&
         s.clean;
}

void KernelCache::OnWriteOpen(uint64_t ino) {
  MutexLock lock(mu_);
  State& s = states_[ino];
  s.owner.reset();
  ++s.owner_gen;
  s.clean = false;
  s.superseded = false;
  s.attr_etag.reset();
  s.attr_inflated = false;
}

void KernelCache::Forget(uint64_t ino) {
  MutexLock lock(mu_);
  states_.erase(ino);
}

}  // namespace ferry::mount
