// The kernel caching decisions on their own (kernel_cache.h); fs_test.cc and fs_versions_test.cc
// check them through MountFs and against a model of the kernel.
#include "mount/kernel_cache.h"

#include <gtest/gtest.h>

namespace ferry::mount {
namespace {

constexpr uint64_t kIno = 7;

// The kernel was given v1's attributes (size 100), and a reader of v1 opened the file and read
// through the cache.
CacheTicket LookUpOpenAndReadV1(KernelCache& k) {
  uint64_t size = 100;
  k.OnAttrReply(kIno, "v1", size);
  CacheTicket t;
  k.OnReadOpen(kIno, "v1", 100, &t);
  EXPECT_TRUE(k.OnRead(kIno, t));
  return t;
}

TEST(KernelCacheTest, FirstOpenDropsPagesAndOpensAfterAReadKeepThem) {
  KernelCache k;
  uint64_t size = 100;
  k.OnAttrReply(kIno, "v1", size);  // lookup
  CacheTicket t1;
  auto c = k.OnReadOpen(kIno, "v1", 100, &t1);
  EXPECT_FALSE(c.keep_cache);  // whatever is cached is not known to be v1's
  EXPECT_FALSE(c.direct_io);
  EXPECT_FALSE(c.invalidate_attr);  // the kernel has v1's attributes
  CacheTicket t2;
  EXPECT_FALSE(k.OnReadOpen(kIno, "v1", 100, &t2).keep_cache);  // not proven yet
  EXPECT_TRUE(k.OnRead(kIno, t1));  // the kernel dropped the pages inside t1's open()
  CacheTicket t3;
  c = k.OnReadOpen(kIno, "v1", 100, &t3);
  EXPECT_TRUE(c.keep_cache);
  EXPECT_FALSE(c.direct_io);
  EXPECT_FALSE(k.OnRelease(kIno, t1));
  EXPECT_FALSE(k.OnRelease(kIno, t2));
  EXPECT_FALSE(k.OnRelease(kIno, t3));
  CacheTicket t4;
  EXPECT_TRUE(k.OnReadOpen(kIno, "v1", 100, &t4).keep_cache);  // closed and reopened: kept
}

TEST(KernelCacheTest, ANewVersionWithNoReaderOpenTakesTheCacheOver) {
  KernelCache k;
  k.OnRelease(kIno, LookUpOpenAndReadV1(k));
  CacheTicket t2;
  auto c = k.OnReadOpen(kIno, "v2", 200, &t2);
  EXPECT_FALSE(c.keep_cache);      // v1's pages go
  EXPECT_FALSE(c.direct_io);       // v2 is the cache's owner now
  EXPECT_TRUE(c.invalidate_attr);  // the kernel's size is v1's
  EXPECT_TRUE(k.OnRead(kIno, t2));
  CacheTicket t3;
  EXPECT_TRUE(k.OnReadOpen(kIno, "v2", 200, &t3).keep_cache);
}

TEST(KernelCacheTest, ANewVersionWhileTheOldIsReadGoesAroundTheCache) {
  KernelCache k;
  CacheTicket old_reader = LookUpOpenAndReadV1(k);
  CacheTicket new_reader;
  auto c = k.OnReadOpen(kIno, "v2", 60, &new_reader);
  EXPECT_TRUE(c.direct_io);        // neither sees nor adds cached pages
  EXPECT_TRUE(c.keep_cache);       // and leaves the old reader's pages alone
  EXPECT_TRUE(c.invalidate_attr);  // the new reader's size
  EXPECT_TRUE(k.OnRead(kIno, new_reader));
  EXPECT_FALSE(k.OnRead(kIno, old_reader));  // superseded: ESTALE from now on
  // The kernel asks for v2's attributes: at least v1's size while v1's reader is open, so the
  // kernel never ends it early at v2's (shorter) end.
  uint64_t size = 60;
  k.OnAttrReply(kIno, "v2", size);
  EXPECT_EQ(size, 100u);
  EXPECT_FALSE(k.OnRelease(kIno, new_reader));
  EXPECT_TRUE(k.OnRelease(kIno, old_reader));  // the inflated size must go now
  size = 60;
  k.OnAttrReply(kIno, "v2", size);
  EXPECT_EQ(size, 60u);
  CacheTicket next;
  auto n = k.OnReadOpen(kIno, "v2", 60, &next);
  EXPECT_FALSE(n.direct_io);  // the cache is free: v2 takes it over
  EXPECT_FALSE(n.keep_cache);
}

TEST(KernelCacheTest, AttributesOfAnotherVersionSupersedeTheReaders) {
  KernelCache k;
  CacheTicket reader = LookUpOpenAndReadV1(k);
  uint64_t size = 150;  // a refreshed getattr or lookup after the TTL: the object changed
  k.OnAttrReply(kIno, "v2", size);
  EXPECT_EQ(size, 150u);  // larger: nothing to raise
  EXPECT_FALSE(k.OnRead(kIno, reader));
  CacheTicket same_old;
  EXPECT_TRUE(k.OnReadOpen(kIno, "v1", 100, &same_old).direct_io);  // stale attributes
  EXPECT_FALSE(k.OnRelease(kIno, reader));
  EXPECT_FALSE(k.OnRelease(kIno, same_old));
}

TEST(KernelCacheTest, AWriteOpenEndsTheOwner) {
  KernelCache k;
  CacheTicket reader = LookUpOpenAndReadV1(k);
  k.OnWriteOpen(kIno);                   // O_TRUNC through the mount
  EXPECT_FALSE(k.OnRead(kIno, reader));  // its pages are the writer's now
  CacheTicket after;
  auto c = k.OnReadOpen(kIno, "v2", 10, &after);
  EXPECT_TRUE(c.direct_io);  // the old reader still reads through the cache
  EXPECT_TRUE(c.invalidate_attr);
  k.OnRelease(kIno, reader);
  k.OnRelease(kIno, after);
  CacheTicket last;
  c = k.OnReadOpen(kIno, "v2", 10, &last);
  EXPECT_FALSE(c.direct_io);
  EXPECT_FALSE(c.keep_cache);  // the written pages go too
}

TEST(KernelCacheTest, WithoutAnETagNothingIsShared) {
  KernelCache k;
  uint64_t size = 5;
  k.OnAttrReply(kIno, "", size);
  CacheTicket a, b;
  auto c = k.OnReadOpen(kIno, "", 5, &a);
  EXPECT_FALSE(c.keep_cache);
  EXPECT_TRUE(c.invalidate_attr);
  k.OnRead(kIno, a);
  EXPECT_TRUE(k.OnReadOpen(kIno, "", 5, &b).direct_io);
  k.OnRelease(kIno, a);
  k.OnRelease(kIno, b);
  CacheTicket d;
  EXPECT_FALSE(k.OnReadOpen(kIno, "", 5, &d).keep_cache);  // never "the same version"
}

TEST(KernelCacheTest, AForgottenInodeStartsOver) {
  KernelCache k;
  k.OnRelease(kIno, LookUpOpenAndReadV1(k));
  k.Forget(kIno);
  CacheTicket again;
  auto c = k.OnReadOpen(kIno, "v1", 100, &again);
  EXPECT_FALSE(c.keep_cache);
  EXPECT_TRUE(c.invalidate_attr);  // nothing known about what the kernel holds
}

TEST(KernelCacheTest, PagesMayBeStoredOnlyForTheCleanOwnerThatIsNotSuperseded) {
  KernelCache k;
  uint64_t size = 100;
  k.OnAttrReply(kIno, "v1", size);
  CacheTicket t1;
  k.OnReadOpen(kIno, "v1", 100, &t1);
  EXPECT_FALSE(k.MayStore(kIno, t1));  // the kernel's drop at open is not proven yet
  ASSERT_TRUE(k.OnRead(kIno, t1));
  EXPECT_TRUE(k.MayStore(kIno, t1));
  CacheTicket direct;
  k.OnReadOpen(kIno, "v2", 200, &direct);  // v2 while v1 is read: around the cache
  EXPECT_FALSE(k.MayStore(kIno, direct));
  EXPECT_FALSE(k.MayStore(kIno, t1));  // v1's readers are superseded now
  k.OnRelease(kIno, t1);
  k.OnRelease(kIno, direct);
  CacheTicket t2;
  k.OnReadOpen(kIno, "v2", 200, &t2);  // v2 owns the cache from here on
  ASSERT_TRUE(k.OnRead(kIno, t2));
  EXPECT_TRUE(k.MayStore(kIno, t2));
  EXPECT_FALSE(k.MayStore(kIno, t1));  // an earlier owner's ticket
  k.OnWriteOpen(kIno);
  EXPECT_FALSE(k.MayStore(kIno, t2));
}

TEST(KernelCacheTest, AVersionWithoutAnETagIsNeverStored) {
  KernelCache k;
  CacheTicket t;
  k.OnReadOpen(kIno, "", 100, &t);
  k.OnRead(kIno, t);
  EXPECT_FALSE(k.MayStore(kIno, t));
}

}  // namespace
}  // namespace ferry::mount
