// The mount core without FUSE: operations against an in-memory store (random operation
// sequences against a reference model: fs_model_test.cc).
#include "mount/fs.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <map>

#include "mount/fs_test_util.h"
#include "storage/memory/memory_store.h"

namespace ferry::mount {
namespace {

// The handle of an open file (the kernel caching decisions are tested on their own).
Fs<uint64_t> OpenFh(MountFs& fs, Ino ino, int flags) {
  auto r = fs.Open(ino, flags);
  if (!r) return std::unexpected(r.error());
  return r->fh;
}

class MountFsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = storage::MakeMemoryStore();
    ASSERT_TRUE(store_->WriteAll("data/a.txt", "hello").ok());
    ASSERT_TRUE(store_->WriteAll("data/dir/b.bin", std::string(3 << 20, 'b')).ok());
    ASSERT_TRUE(store_->WriteAll("data/dir/sub/c", "c").ok());
    ASSERT_TRUE(store_->WriteAll("other/x", "x").ok());
    fs_ = std::make_unique<MountFs>(store_, "data/",
                                    MountOptions{.prefetch = {.part_size = 256 << 10,
                                                              .initial_window = 256 << 10,
                                                              .max_window = 1 << 20},
                                                 // tests name processes directly
                                                 .process_of = [](uint64_t id) { return id; }});
  }

  std::vector<std::string> List(Ino ino) { return testing::ListNames(*fs_, ino); }
  std::string ReadAll(Ino ino) { return testing::ReadFile(*fs_, ino, 128 << 10); }

  std::shared_ptr<storage::Store> store_;
  std::unique_ptr<MountFs> fs_;
};

TEST_F(MountFsTest, LooksUpFilesAndImplicitDirectories) {
  auto a = fs_->Lookup(kRootIno, "a.txt");
  ASSERT_TRUE(a.has_value());
  EXPECT_FALSE(a->dir);
  EXPECT_EQ(a->size, 5u);
  auto d = fs_->Lookup(kRootIno, "dir");
  ASSERT_TRUE(d.has_value());
  EXPECT_TRUE(d->dir);
  EXPECT_EQ(fs_->Lookup(kRootIno, "missing").error(), ENOENT);
  EXPECT_EQ(fs_->Lookup(kRootIno, "x").error(), ENOENT);  // outside the mounted prefix
  EXPECT_EQ(List(kRootIno), (std::vector<std::string>{".", "..", "dir", "a.txt"}));
  EXPECT_EQ(List(d->ino), (std::vector<std::string>{".", "..", "sub", "b.bin"}));
}

TEST_F(MountFsTest, SequentialAndRandomReads) {
  auto d = fs_->Lookup(kRootIno, "dir");
  auto b = fs_->Lookup(d->ino, "b.bin");
  EXPECT_EQ(ReadAll(b->ino), std::string(3 << 20, 'b'));
  EXPECT_EQ(fs_->memory_in_use(), 0u);  // every read-ahead buffer was returned
  auto fh = OpenFh(*fs_, b->ino, O_RDONLY);
  auto r = fs_->Read(*fh, 1000000, 10);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(*r, std::string(10, 'b'));
  EXPECT_EQ(fs_->Read(*fh, 3 << 20, 10)->size(), 0u);  // at EOF
  fs_->Release(*fh);
}

TEST_F(MountFsTest, WritesAppearOnlyWhenClosed) {
  auto c = fs_->Create(kRootIno, "new.txt", O_WRONLY | O_CREAT, /*owner=*/100);
  ASSERT_TRUE(c.has_value());
  auto [attr, fh] = *c;
  EXPECT_TRUE(fs_->Flush(fh, 100).has_value());  // `> file`: a dup'ed descriptor closed first
  EXPECT_EQ(*fs_->Write(fh, 0, "abc"), 3u);
  EXPECT_TRUE(fs_->Flush(fh, 200).has_value());  // a child's inherited descriptor, at exec()
  EXPECT_EQ(*fs_->Write(fh, 3, "d"), 1u);        // still open for writing
  EXPECT_EQ(fs_->Write(fh, 10, "x").error(), EOPNOTSUPP);  // not sequential
  EXPECT_EQ(fs_->Open(attr.ino, O_RDONLY).error(), EBUSY);
  EXPECT_FALSE(store_->Stat("data/new.txt").ok());  // not visible before close
  EXPECT_TRUE(fs_->Flush(fh, 100).has_value());     // the opener's close commits
  fs_->Release(fh);
  EXPECT_EQ(*store_->ReadAll("data/new.txt"), "abcd");
  EXPECT_EQ(ReadAll(attr.ino), "abcd");
}

TEST_F(MountFsTest, UnsupportedOperationsFailAtOnce) {
  auto a = fs_->Lookup(kRootIno, "a.txt");
  EXPECT_EQ(fs_->Open(a->ino, O_WRONLY).error(), EPERM);  // in-place change of an object
  EXPECT_EQ(fs_->Open(a->ino, O_RDWR | O_TRUNC).error(), EPERM);
  EXPECT_EQ(fs_->SetAttr(a->ino, {.mode = 0600}).error(), EPERM);    // chmod/chown
  EXPECT_EQ(fs_->SetAttr(a->ino, {.size = 2}).error(), EOPNOTSUPP);  // truncate
  EXPECT_EQ(fs_->Rename(kRootIno, "dir", kRootIno, "dir2").error(), EOPNOTSUPP);
  EXPECT_EQ(fs_->Rename(kRootIno, "a.txt", kRootIno, "b.txt").error(), EXDEV);
  EXPECT_EQ(fs_->Rmdir(kRootIno, "dir").error(), ENOTEMPTY);
  EXPECT_EQ(fs_->Create(kRootIno, "a.txt", O_WRONLY).error(), EEXIST);
  // O_TRUNC replaces the whole object.
  auto fh = OpenFh(*fs_, a->ino, O_WRONLY | O_TRUNC);
  ASSERT_TRUE(fh.has_value());
  EXPECT_TRUE(fs_->Write(*fh, 0, "replaced").has_value());
  EXPECT_TRUE(fs_->Fsync(*fh).has_value());
  EXPECT_EQ(fs_->Write(*fh, 8, "more").error(), EPERM);  // complete after fsync
  fs_->Release(*fh);
  EXPECT_EQ(*store_->ReadAll("data/a.txt"), "replaced");
}

TEST_F(MountFsTest, SmallFilesOpenedInNameOrderAreReadAheadWhole) {
  for (int i = 0; i < 30; ++i) {
    ASSERT_TRUE(
        store_->WriteAll("data/many/f" + std::to_string(10 + i), "content " + std::to_string(i))
            .ok());
  }
  auto dir = fs_->Lookup(kRootIno, "many");
  ASSERT_TRUE(dir.has_value());
  ASSERT_EQ(List(dir->ino).size(), 32u);  // "." ".." and the 30 files, attributes cached
  auto open_read = [&](const std::string& name) -> Fs<std::string> {
    auto a = fs_->Lookup(dir->ino, name);
    if (!a) return std::unexpected(a.error());
    auto fh = OpenFh(*fs_, a->ino, O_RDONLY);
    if (!fh) return std::unexpected(fh.error());
    auto d = fs_->Read(*fh, 0, 4096);
    fs_->Release(*fh);
    return d;
  };
  ASSERT_EQ(*open_read("f10"), "content 0");
  ASSERT_EQ(*open_read("f11"), "content 1");  // in order: f12... are fetched in the background
  fs_->WaitForBackgroundFetches();
  ASSERT_TRUE(store_->Delete("data/many/f15").ok());
  EXPECT_EQ(*open_read("f15"), "content 5");  // served from the read-ahead
  // Out of order: nothing is read ahead, so a deleted file's read fails.
  EXPECT_EQ(*open_read("f30"), "content 20");
  ASSERT_TRUE(store_->Delete("data/many/f37").ok());  // beyond what f11 started
  EXPECT_FALSE(open_read("f37").has_value());
}

TEST_F(MountFsTest, RandomReadsWithADiskCacheFillItWithTheWholeObject) {
  std::string cache = ::testing::TempDir() + "ferry-block-cache-" + std::to_string(::getpid());
  std::string data(12 << 20, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 7 % 251);
  ASSERT_TRUE(store_->WriteAll("data/db.bin", data).ok());
  MountFs fs(store_, "data/", {.cache_dir = cache});
  auto a = fs.Lookup(kRootIno, "db.bin");
  auto fh = OpenFh(fs, a->ino, O_RDONLY);
  ASSERT_TRUE(fh.has_value());
  EXPECT_EQ(*fs.Read(*fh, 5000000, 4096), data.substr(5000000, 4096));  // random
  EXPECT_EQ(*fs.Read(*fh, 100, 4096), data.substr(100, 4096));          // random: fill starts
  auto blocks = [&] {  // complete blocks (a block being written is a ".tmp-" file until renamed)
    int n = 0;
    for (const auto& e : std::filesystem::directory_iterator(cache)) {
      n += e.path().filename().string().find(".tmp-") == std::string::npos;
    }
    return n;
  };
  fs.WaitForBackgroundFetches();
  ASSERT_EQ(blocks(), 12);
  ASSERT_TRUE(store_->Delete("data/db.bin").ok());  // everything is local now
  for (uint64_t off : {0ull, 3000000ull, 12ull * (1 << 20) - 10}) {
    auto got = fs.Read(*fh, off, 4096);
    ASSERT_TRUE(got.has_value()) << off;
    EXPECT_EQ(*got, data.substr(off, 4096)) << off;
  }
  fs.Release(*fh);
  std::filesystem::remove_all(cache);
}

TEST_F(MountFsTest, SmallObjectsReadRandomlyAreFetchedWholeOnce) {
  std::string data(2 << 20, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i % 253);
  ASSERT_TRUE(store_->WriteAll("data/index.bin", data).ok());
  auto a = fs_->Lookup(kRootIno, "index.bin");
  auto fh = OpenFh(*fs_, a->ino, O_RDONLY);
  EXPECT_EQ(*fs_->Read(*fh, 1500000, 100), data.substr(1500000, 100));  // random
  EXPECT_EQ(*fs_->Read(*fh, 700000, 100), data.substr(700000, 100));    // random: fetched whole
  EXPECT_EQ(fs_->memory_in_use(), data.size());                         // within the budget
  ASSERT_TRUE(store_->Delete("data/index.bin").ok());
  EXPECT_EQ(*fs_->Read(*fh, 12345, 100), data.substr(12345, 100));  // from memory
  fs_->Release(*fh);
  EXPECT_EQ(fs_->memory_in_use(), 0u);
}

TEST_F(MountFsTest, ReadOnlyMountRefusesWrites) {
  MountFs ro(store_, "data/", {.read_only = true});
  auto a = ro.Lookup(kRootIno, "a.txt");
  EXPECT_EQ(ro.Open(a->ino, O_WRONLY | O_TRUNC).error(), EROFS);
  EXPECT_EQ(ro.Create(kRootIno, "n", O_WRONLY).error(), EROFS);
  EXPECT_EQ(ro.Unlink(kRootIno, "a.txt").error(), EROFS);
  EXPECT_EQ(ro.Mkdir(kRootIno, "d").error(), EROFS);
}

// Versions: an open file is pinned to the ETag it saw; the kernel keeps its page cache only for
// the version it holds (kernel_cache.h); reads of a replaced object fail with ESTALE.
TEST_F(MountFsTest, KernelKeepsItsPageCacheOnlyForTheVersionItHolds) {
  auto a = fs_->Lookup(kRootIno, "a.txt");  // the kernel has version 1's attributes
  auto r1 = fs_->Open(a->ino, O_RDONLY);
  ASSERT_TRUE(r1.has_value());
  EXPECT_FALSE(r1->caching.keep_cache);  // first open: drop whatever the kernel holds
  EXPECT_FALSE(r1->caching.direct_io);
  EXPECT_FALSE(r1->caching.invalidate_attr);
  EXPECT_EQ(*fs_->Read(r1->fh, 0, 100), "hello");
  EXPECT_FALSE(fs_->Release(r1->fh));
  auto r2 = fs_->Open(a->ino, O_RDONLY);
  EXPECT_TRUE(r2->caching.keep_cache);  // unchanged object: the cached pages are its own
  fs_->Release(r2->fh);
  ASSERT_TRUE(store_->WriteAll("data/a.txt", "HELLO, version 2").ok());
  // Inside the metadata TTL the mount still pins version 1 (and the kernel may serve it from
  // its cache); a read that reaches the store finds the change: ESTALE, never version 2's bytes.
  auto r3 = fs_->Open(a->ino, O_RDONLY);
  EXPECT_TRUE(r3->caching.keep_cache);
  EXPECT_EQ(fs_->Read(r3->fh, 0, 100).error(), ESTALE);
  fs_->Release(r3->fh);
  // The failed read expired the attributes: the next open sees version 2, drops the kernel's
  // pages and its attributes (the size changed).
  auto r4 = fs_->Open(a->ino, O_RDONLY);
  EXPECT_FALSE(r4->caching.keep_cache);
  EXPECT_FALSE(r4->caching.direct_io);
  EXPECT_TRUE(r4->caching.invalidate_attr);
  EXPECT_EQ(fs_->GetAttr(a->ino)->size, 16u);
  EXPECT_EQ(*fs_->Read(r4->fh, 0, 100), "HELLO, version 2");
  fs_->Release(r4->fh);
}

TEST_F(MountFsTest, ANewVersionOpenedWhileTheOldIsReadBypassesThePageCache) {
  MountFs fs(store_, "data/", {.metadata_ttl = std::chrono::seconds(0)});
  auto a = fs.Lookup(kRootIno, "a.txt");
  auto old_reader = fs.Open(a->ino, O_RDONLY);
  EXPECT_EQ(*fs.Read(old_reader->fh, 0, 3), "hel");
  ASSERT_TRUE(store_->WriteAll("data/a.txt", "v2").ok());
  auto new_reader = fs.Open(a->ino, O_RDONLY);
  EXPECT_TRUE(new_reader->caching.direct_io);  // the page cache holds version 1's pages
  EXPECT_TRUE(new_reader->caching.keep_cache);
  EXPECT_TRUE(new_reader->caching.invalidate_attr);
  EXPECT_EQ(*fs.Read(new_reader->fh, 0, 100), "v2");
  // Version 1's reader is superseded, even for bytes it has in memory already.
  EXPECT_EQ(fs.Read(old_reader->fh, 0, 3).error(), ESTALE);
  // While it is open the kernel is told at least its size (no silent early end of file).
  EXPECT_EQ(fs.GetAttr(a->ino)->size, 5u);
  EXPECT_FALSE(fs.Release(new_reader->fh));
  EXPECT_TRUE(fs.Release(old_reader->fh));  // the inflated size must go
  EXPECT_EQ(fs.GetAttr(a->ino)->size, 2u);
  auto next = fs.Open(a->ino, O_RDONLY);
  EXPECT_FALSE(next->caching.direct_io);
  EXPECT_EQ(*fs.Read(next->fh, 0, 100), "v2");
  fs.Release(next->fh);
}

TEST_F(MountFsTest, EveryReadPathOfAReplacedObjectFailsWithEstale) {
  MountFs fs(
      store_, "data/",
      {.metadata_ttl = std::chrono::seconds(0),
       .prefetch = {.part_size = 64 << 10, .initial_window = 64 << 10, .max_window = 128 << 10}});
  std::string v1(1 << 20, '1'), v2(1 << 20, '2');
  ASSERT_TRUE(store_->WriteAll("data/r.bin", v1).ok());
  auto a = fs.Lookup(kRootIno, "r.bin");
  auto seq = fs.Open(a->ino, O_RDONLY);  // sequential: read-ahead window
  auto rnd = fs.Open(a->ino, O_RDONLY);  // random reads, then the whole object once
  EXPECT_EQ(*fs.Read(seq->fh, 0, 4096), v1.substr(0, 4096));
  EXPECT_EQ(*fs.Read(rnd->fh, 500000, 10), v1.substr(0, 10));
  ASSERT_TRUE(store_->WriteAll("data/r.bin", v2).ok());
  for (uint64_t off = 4096; off < v1.size(); off += 4096) {
    auto d = fs.Read(seq->fh, off, 4096);
    if (!d) {
      EXPECT_EQ(d.error(), ESTALE);
      break;
    }
    EXPECT_EQ(*d, v1.substr(off, 4096)) << off;  // from the window: still version 1
  }
  EXPECT_EQ(fs.Read(rnd->fh, 100, 10).error(), ESTALE);
  fs.Release(seq->fh);
  fs.Release(rnd->fh);
  ASSERT_TRUE(store_->Delete("data/r.bin").ok());
  auto gone = fs.Open(a->ino, O_RDONLY);
  EXPECT_EQ(gone.error(), ENOENT);
}

TEST_F(MountFsTest, ReplacingAFileThroughTheMountSupersedesItsReaders) {
  auto a = fs_->Lookup(kRootIno, "a.txt");
  auto reader = fs_->Open(a->ino, O_RDONLY);
  EXPECT_EQ(*fs_->Read(reader->fh, 0, 2), "he");
  auto writer = fs_->Open(a->ino, O_WRONLY | O_TRUNC);
  ASSERT_TRUE(writer.has_value());
  EXPECT_EQ(fs_->Read(reader->fh, 0, 2).error(), ESTALE);  // its pages are the writer's now
  EXPECT_TRUE(fs_->Write(writer->fh, 0, "new").has_value());
  EXPECT_TRUE(fs_->Flush(writer->fh).has_value());
  fs_->Release(writer->fh);
  fs_->Release(reader->fh);
  auto again = fs_->Open(a->ino, O_RDONLY);
  EXPECT_FALSE(again->caching.keep_cache);  // the written pages are dropped, read anew
  EXPECT_EQ(*fs_->Read(again->fh, 0, 10), "new");
  fs_->Release(again->fh);
}

TEST_F(MountFsTest, ChmodAndChownToTheValuesShownSucceed) {
  auto a = fs_->Lookup(kRootIno, "a.txt");
  auto d = fs_->Lookup(kRootIno, "dir");
  const uint32_t uid = ::getuid(), gid = ::getgid();
  EXPECT_EQ(fs_->PermissionsOf(*a).mode, static_cast<uint32_t>(S_IFREG | 0644));
  EXPECT_EQ(fs_->PermissionsOf(*d).mode, static_cast<uint32_t>(S_IFDIR | 0755));
  EXPECT_TRUE(fs_->SetAttr(a->ino, {.mode = 0644, .uid = uid, .gid = gid}).has_value());  // cp -p
  EXPECT_TRUE(fs_->SetAttr(d->ino, {.mode = 0755}).has_value());
  EXPECT_EQ(fs_->SetAttr(d->ino, {.mode = 0700}).error(), EPERM);
  EXPECT_EQ(fs_->SetAttr(a->ino, {.uid = uid + 1}).error(), EPERM);
  EXPECT_EQ(fs_->SetAttr(a->ino, {.gid = gid + 1}).error(), EPERM);
  EXPECT_TRUE(fs_->SetAttr(a->ino, {}).has_value());  // times only: accepted, not stored
  MountFs ro(store_, "data/", {.read_only = true});
  auto ra = ro.Lookup(kRootIno, "a.txt");
  EXPECT_TRUE(ro.SetAttr(ra->ino, {.mode = 0444}).has_value());
  EXPECT_EQ(ro.SetAttr(ra->ino, {.mode = 0644}).error(), EPERM);
  EXPECT_EQ(fs_->SetAttr(12345, {.mode = 0644}).error(), ENOENT);
}

// Forwards to another store; listings and stats fail while `fail` is set (S3 unreachable).
class LookupFailingStore final : public storage::Store {
 public:
  explicit LookupFailingStore(std::shared_ptr<storage::Store> inner) : inner_(std::move(inner)) {}
  std::string UrlFor(std::string_view key) const override { return inner_->UrlFor(key); }
  storage::Capabilities capabilities() const override { return inner_->capabilities(); }
  Result<storage::ObjectInfo> Stat(std::string_view key) override {
    if (fail) return Status(StatusCode::kUnavailable, "injected");
    return inner_->Stat(key);
  }
  Status Read(std::string_view key, const storage::ReadOptions& o,
              const storage::ByteSink& sink) override {
    return inner_->Read(key, o, sink);
  }
  Result<std::unique_ptr<storage::Writer>> NewWriter(std::string_view key,
                                                     const storage::WriteOptions& o) override {
    return inner_->NewWriter(key, o);
  }
  Result<storage::ListPage> List(const storage::ListOptions& o) override {
    if (fail) return Status(StatusCode::kUnavailable, "injected");
    return inner_->List(o);
  }
  Status Delete(std::string_view key) override { return inner_->Delete(key); }
  std::atomic<bool> fail = false;

 private:
  std::shared_ptr<storage::Store> inner_;
};

// A lookup that fails is not "does not exist": create and mkdir must not go on (a create
// would replace the object the lookup could not see).
TEST_F(MountFsTest, CreateAndMkdirNeedTheNameToBeKnownMissing) {
  auto flaky = std::make_shared<LookupFailingStore>(store_);
  MountFs fs(flaky, "data/", {.metadata_ttl = std::chrono::seconds(0)});
  flaky->fail = true;
  auto c = fs.Create(kRootIno, "a.txt", O_WRONLY | O_CREAT);
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.error(), EIO);
  EXPECT_EQ(fs.Mkdir(kRootIno, "new").error(), EIO);
  flaky->fail = false;
  EXPECT_EQ(fs.Lookup(kRootIno, "new").error(), ENOENT);
  EXPECT_EQ(*store_->ReadAll("data/a.txt"), "hello");
  auto a = fs_->Lookup(kRootIno, "a.txt");
  EXPECT_EQ(fs_->Mkdir(a->ino, "x").error(), ENOTDIR);
  EXPECT_EQ(fs_->Create(a->ino, "x", O_WRONLY).error(), ENOTDIR);
}

// S3 has no directories: one made here becomes real when a file is written below it, and goes
// when the store has nothing below it any more, unless it still holds a directory made here.
TEST_F(MountFsTest, ADirectoryStaysWhileItHoldsADirectoryMadeHere) {
  MountFs fs(store_, "data/", {.metadata_ttl = std::chrono::seconds(0)});
  auto a = fs.Mkdir(kRootIno, "a");
  auto b = fs.Mkdir(a->ino, "b");
  auto c = fs.Mkdir(b->ino, "c");
  ASSERT_TRUE(c.has_value());
  auto f = fs.Create(b->ino, "f", O_WRONLY | O_CREAT);
  ASSERT_TRUE(f.has_value());
  ASSERT_TRUE(fs.Write(f->second, 0, "x").has_value());
  ASSERT_TRUE(fs.Flush(f->second).has_value());  // a/ and a/b/ are in the store now
  fs.Release(f->second);
  ASSERT_TRUE(fs.Unlink(b->ino, "f").has_value());  // and gone from it again
  EXPECT_EQ(fs.Lookup(kRootIno, "a")->ino, a->ino);
  EXPECT_EQ(fs.Lookup(a->ino, "b")->ino, b->ino);
  EXPECT_EQ(fs.Lookup(b->ino, "c")->ino, c->ino);
  EXPECT_EQ(testing::ListNames(fs, a->ino), (std::vector<std::string>{".", "..", "b"}));
  EXPECT_EQ(fs.Rmdir(a->ino, "b").error(), ENOTEMPTY);
  ASSERT_TRUE(fs.Rmdir(b->ino, "c").has_value());
  EXPECT_EQ(fs.Lookup(a->ino, "b").error(), ENOENT);  // nothing keeps it any more
  EXPECT_EQ(fs.Lookup(kRootIno, "a").error(), ENOENT);
}

}  // namespace
}  // namespace ferry::mount
