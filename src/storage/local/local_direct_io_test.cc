// Writes with O_DIRECT (local_store.h, "Direct I/O"), parallel parts and long streams: the bytes
// on disk are exact whatever the buffers' alignment, the tail and the part size, across a
// resume; filesystems and part sizes that do not qualify fall back to the page cache.

#include <gtest/gtest.h>
#include <linux/magic.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <random>
#include <thread>

#include "base/aligned_buffer.h"
#include "base/crc32c.h"
#include "storage/local/local_store.h"

namespace ferry::storage {
namespace {

class LocalDirectIoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = (std::filesystem::temp_directory_path() /
             ("ferry-dio-" + std::to_string(getpid()) + "-" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name()))
                .string();
    std::filesystem::create_directories(root_);
    struct statfs fs;
    ASSERT_EQ(::statfs(root_.c_str(), &fs), 0);
    direct_fs_ = fs.f_type == EXT4_SUPER_MAGIC || fs.f_type == XFS_SUPER_MAGIC;
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  static std::string RandomBytes(size_t n, uint32_t seed) {
    std::mt19937 gen(seed);
    std::string s(n, '\0');
    for (auto& c : s) c = static_cast<char>(gen());
    return s;
  }

  std::string root_;
  bool direct_fs_ = false;
};

constexpr uint64_t kMiB = 1 << 20;

TEST_F(LocalDirectIoTest, PartsFromUnalignedAndAlignedMemoryLandExactly) {
  auto store = MakeLocalStore(root_);
  const uint64_t size = 5 * kMiB + 1234;  // the last part ends inside a block
  const std::string data = RandomBytes(size, 1);
  auto w = store->NewPartWriter("d/big.bin", {.size = size, .part_size = kMiB});
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ((*w)->direct_io(), direct_fs_) << "on " << root_;
  // An aligned copy for parts 1 and 3; the others come from the string at odd addresses.
  AlignedBuffer aligned = NewAlignedBuffer(kMiB);
  std::memcpy(aligned.get(), data.data(), kMiB);
  std::vector<std::thread> threads;
  for (int n = 6; n >= 1; --n) {
    threads.emplace_back([&, n] {
      uint64_t off = (n - 1) * kMiB;
      std::string_view part = std::string_view(data).substr(off, std::min(kMiB, size - off));
      if (n == 1) part = std::string_view(aligned.get(), kMiB);
      std::string odd = " " + std::string(part);  // part 3 from an address ending in ...1
      if (n == 3) part = std::string_view(odd).substr(1);
      EXPECT_TRUE((*w)->WritePart(n, part).ok()) << n;
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_TRUE((*w)->Commit().ok());
  auto back = store->ReadAll("d/big.bin");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->size(), size);
  EXPECT_TRUE(*back == data) << "bytes differ";
}

TEST_F(LocalDirectIoTest, ResumedWriteChecksStoredPartsAndFinishes) {
  auto store = MakeLocalStore(root_);
  const uint64_t size = 3 * kMiB + 10;
  const std::string data = RandomBytes(size, 2);
  std::string token;
  {
    auto w = store->NewPartWriter("big.bin", {.size = size, .part_size = kMiB});
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->WritePart(2, std::string_view(data).substr(kMiB, kMiB)).ok());
    token = (*w)->resume_token();
  }  // a process that stopped here: the temporary file stays
  auto w =
      store->NewPartWriter("big.bin", {.size = size, .part_size = kMiB, .resume_token = token});
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ((*w)->direct_io(), direct_fs_);
  auto crc = (*w)->StoredCrc32c(kMiB, kMiB);
  ASSERT_TRUE(crc.ok());
  EXPECT_EQ(*crc, Crc32cOf(std::string_view(data).substr(kMiB, kMiB)));
  ASSERT_TRUE((*w)->WritePart(1, std::string_view(data).substr(0, kMiB)).ok());
  ASSERT_TRUE((*w)->WritePart(3, std::string_view(data).substr(2 * kMiB, kMiB)).ok());
  ASSERT_TRUE((*w)->WritePart(4, std::string_view(data).substr(3 * kMiB)).ok());
  ASSERT_TRUE((*w)->Commit().ok());
  EXPECT_TRUE(*store->ReadAll("big.bin") == data);
}

TEST_F(LocalDirectIoTest, PartSizesOffBlockBoundariesAndTheSwitchUseThePageCache) {
  const uint64_t size = 3 * 1000 * 1000;
  const std::string data = RandomBytes(size, 3);
  for (bool direct : {true, false}) {
    auto store = MakeLocalStore(root_, {.direct_io = direct});
    const uint64_t part = direct ? 1000 * 1000 : kMiB;  // with direct on: parts off 4 KiB
    auto w = store->NewPartWriter("f.bin", {.size = size, .part_size = part});
    ASSERT_TRUE(w.ok());
    EXPECT_FALSE((*w)->direct_io());
    for (uint64_t n = 1; (n - 1) * part < size; ++n) {
      uint64_t off = (n - 1) * part;
      ASSERT_TRUE((*w)->WritePart(static_cast<int>(n),
                                  std::string_view(data).substr(off, std::min(part, size - off)))
                      .ok());
    }
    ASSERT_TRUE((*w)->Commit().ok());
    EXPECT_TRUE(*store->ReadAll("f.bin") == data);
  }
}

TEST_F(LocalDirectIoTest, AStreamPastEightMiBLandsExactlyInOddAppends) {
  for (uint64_t size : {uint64_t{8} << 20, (uint64_t{21} << 20) + 4097, uint64_t{100}}) {
    auto store = MakeLocalStore(root_);
    const std::string data = RandomBytes(size, 5);
    auto w = store->NewWriter("s/stream.bin", {});
    ASSERT_TRUE(w.ok());
    for (size_t off = 0; off < size; off += 777'777) {
      ASSERT_TRUE((*w)->Append(std::string_view(data).substr(off, 777'777)).ok()) << off;
    }
    ASSERT_TRUE((*w)->Commit().ok());
    auto back = store->ReadAll("s/stream.bin");
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(back->size(), size);
    EXPECT_TRUE(*back == data) << "bytes differ at size " << size;
  }
}

TEST_F(LocalDirectIoTest, AnAbandonedStreamLeavesNothing) {
  auto store = MakeLocalStore(root_);
  {
    auto w = store->NewWriter("s/gone.bin", {});
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->Append(RandomBytes(10 << 20, 6)).ok());  // past the switch to O_DIRECT
  }
  EXPECT_FALSE(store->Stat("s/gone.bin").ok());
  for (auto& e : std::filesystem::recursive_directory_iterator(root_)) {
    EXPECT_FALSE(e.is_regular_file()) << e.path();
  }
}

TEST_F(LocalDirectIoTest, AbortRemovesTheTemporaryFile) {
  auto store = MakeLocalStore(root_);
  auto w = store->NewPartWriter("a.bin", {.size = 2 * kMiB, .part_size = kMiB});
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->WritePart(1, RandomBytes(kMiB, 4)).ok());
  (*w)->Abort();
  EXPECT_TRUE(std::filesystem::is_empty(root_));
  EXPECT_FALSE((*w)->direct_io());
}

}  // namespace
}  // namespace ferry::storage
