// Packs a generated image-folder-like tree into shards on the local store and reads it back
// through ShardReader: exactly-once splits, resume, corruption handling, the cache.
#include "shard/reader.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "shard/pack.h"
#include "shard/scan.h"
#include "shard/shard_test_util.h"

namespace ferry::shard {
namespace {

namespace fs = std::filesystem;

class ShardReaderTest : public testing::SampleTreeTest {
 protected:
  ShardReaderTest() : SampleTreeTest(200, 100, 7) {}

  // Overwrites 23 bytes in the middle of a packed shard.
  void Corrupt(const std::string& shard) {
    std::fstream f(root_ / "out" / shard, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(3000);
    f.write("garbage-garbage-garbage", 23);
  }
  PackReport Pack(PackOptions o = {.samples_per_shard = 23}) {
    auto r = PackShards(registry_, (root_ / "src").string(), (root_ / "out" / "train").string(), o);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return *r;
  }

  std::vector<std::string> ReadKeys(ReaderOptions o, uint64_t limit = UINT64_MAX,
                                    Status* err = nullptr) {
    auto reader = ShardReader::Open(registry_, (root_ / "out" / "train").string(), o);
    EXPECT_TRUE(reader.ok()) << reader.status().message();
    std::vector<std::string> keys;
    while (keys.size() < limit) {
      auto s = (*reader)->Next();
      if (!s.ok()) {
        if (err) *err = s.status();
        break;
      }
      if (!*s) break;
      EXPECT_EQ((**s).files.at("cls"), std::to_string(std::stoi((**s).key.substr(2)) - 1000));
      keys.push_back((**s).key);
    }
    return keys;
  }
};

TEST_F(ShardReaderTest, PacksDeterministicallyAndReadsEverythingBack) {
  auto r = Pack();
  EXPECT_EQ(r.index.samples(), 200u);
  EXPECT_EQ(r.index.shards.size(), 9u);  // 8 x 23 + 16
  EXPECT_EQ(r.files, 400u);
  std::string first;
  {
    std::ifstream in(root_ / "out" / "train-000000.tar", std::ios::binary);
    first.assign(std::istreambuf_iterator<char>(in), {});
  }
  fs::remove_all(root_ / "out");
  Pack();
  std::ifstream in(root_ / "out" / "train-000000.tar", std::ios::binary);
  EXPECT_EQ(first, std::string(std::istreambuf_iterator<char>(in), {}));  // byte-identical
  auto keys = ReadKeys({.plan = {.shuffle = false}});
  ASSERT_EQ(keys.size(), 200u);
  EXPECT_EQ(keys.front(), "d/1000");
  EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end()));
  // The scanner agrees with what the packer recorded.
  auto at = registry_.Open((root_ / "out").string() + "/");
  auto scanned = ScanShard(*at->store, at->key + "train-000003.tar", "train-000003.tar");
  ASSERT_TRUE(scanned.ok());
  EXPECT_EQ(scanned->offsets, r.index.shards[3].offsets);
  EXPECT_EQ(scanned->crc32c, r.index.shards[3].crc32c);
}

TEST_F(ShardReaderTest, TargetSizeClosesShards) {
  auto r = Pack({.target_size = 16 << 10});
  for (const auto& s : r.index.shards) EXPECT_LE(s.size, (16u << 10) + 4096);
  EXPECT_GT(r.index.shards.size(), 3u);
  EXPECT_EQ(r.index.samples(), 200u);
  auto again =
      PackShards(registry_, (root_ / "src").string(), (root_ / "out" / "train").string(), {});
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), StatusCode::kAlreadyExists);
}

TEST_F(ShardReaderTest, SplitsCoverEverySampleOnceAndShuffleIsSeeded) {
  Pack();
  std::multiset<std::string> all;
  for (int rank = 0; rank < 2; ++rank) {
    for (int worker = 0; worker < 2; ++worker) {
      for (auto& k : ReadKeys(
               {.plan = {
                    .seed = 3, .epoch = 2, .shuffle_buffer = 50, .split = {rank, 2, worker, 2}}})) {
        all.insert(k);
      }
    }
  }
  EXPECT_EQ(all.size(), 200u);
  EXPECT_EQ(std::set(all.begin(), all.end()).size(), 200u);
  auto a = ReadKeys({.plan = {.seed = 3, .epoch = 0}});
  EXPECT_EQ(a, ReadKeys({.plan = {.seed = 3, .epoch = 0}}));
  EXPECT_NE(a, ReadKeys({.plan = {.seed = 3, .epoch = 1}}));
}

TEST_F(ShardReaderTest, ResumeYieldsExactlyTheRest) {
  Pack();
  ReaderOptions o{.plan = {.seed = 9, .epoch = 4, .shuffle_buffer = 40}};
  auto full = ReadKeys(o);
  for (uint64_t start : {0ul, 1ul, 57ul, 150ul, 199ul, 200ul}) {
    o.start = start;
    auto rest = ReadKeys(o);
    EXPECT_EQ(rest, std::vector<std::string>(full.begin() + static_cast<long>(start), full.end()))
        << "start " << start;
  }
}

TEST_F(ShardReaderTest, CorruptShardFailsWithItsNameOrIsSkipped) {
  Pack();
  Corrupt("train-000002.tar");
  Status err;
  auto keys = ReadKeys({.plan = {.shuffle = false}}, UINT64_MAX, &err);
  ASSERT_FALSE(err.ok());
  EXPECT_NE(err.message().find("train-000002.tar"), std::string::npos) << err.message();
  auto skipped = ReadKeys({.plan = {.shuffle = false}, .skip_corrupt = true});
  EXPECT_LT(skipped.size(), 200u);
  EXPECT_GE(skipped.size(), 200u - 23u);
  // Truncation too.
  fs::resize_file(root_ / "out" / "train-000005.tar", 5000);
  err = Status();
  ReadKeys({.plan = {.shuffle = false}, .skip_corrupt = true}, UINT64_MAX, &err);
  EXPECT_TRUE(err.ok()) << err.message();
}

// "shard 'URL'" once: errors of the fetch name the shard themselves, the reader names the shard
// in the parser's errors (no message is searched for it).
size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST_F(ShardReaderTest, ErrorsNameTheShardOnce) {
  Pack();
  Corrupt("train-000002.tar");
  Status err;
  ReadKeys({.plan = {.shuffle = false}}, UINT64_MAX, &err);
  ASSERT_FALSE(err.ok());
  EXPECT_EQ(Count(err.message(), "shard '"), 1u) << err.message();
  // A missing shard: the store's error, named by the fetch.
  fs::remove(root_ / "out" / "train-000002.tar");
  err = Status();
  ReadKeys({.plan = {.shuffle = false}}, UINT64_MAX, &err);
  ASSERT_FALSE(err.ok());
  EXPECT_EQ(Count(err.message(), "shard '"), 1u) << err.message();
  EXPECT_NE(err.message().find("train-000002.tar"), std::string::npos) << err.message();
}

TEST_F(ShardReaderTest, CacheKeepsVerifiedShardsWithinItsCap) {
  Pack();
  std::string cache = (root_ / "cache").string();
  auto first = ReadKeys({.plan = {.shuffle = false}, .cache_dir = cache, .cache_size = 1 << 30});
  size_t cached = 0;
  for (const auto& e : fs::directory_iterator(cache)) cached += e.path().extension() == ".tar";
  EXPECT_EQ(cached, 9u);
  // Served from the cache even with the shards gone from the store.
  for (int i = 0; i < 9; ++i)
    fs::remove(root_ / "out" / ("train-00000" + std::to_string(i) + ".tar"));
  EXPECT_EQ(ReadKeys({.plan = {.shuffle = false}, .cache_dir = cache, .cache_size = 1 << 30}),
            first);
}

}  // namespace
}  // namespace ferry::shard

namespace ferry::shard {
namespace {

TEST_F(ShardReaderTest, OpenIndexRecordsTheIndexChecksumWhichChangesWithTheShards) {
  Pack();
  std::string url = (root_ / "out" / "train").string();
  auto first = OpenIndex(registry_, url);
  ASSERT_TRUE(first.ok()) << first.status().message();
  std::ifstream in(root_ / "out" / "train.index.json", std::ios::binary);
  EXPECT_EQ(first->crc32c, Crc32cOf(std::string(std::istreambuf_iterator<char>(in), {})));
  // The same samples in other shards: another dataset identity.
  fs::remove_all(root_ / "out");
  Pack({.samples_per_shard = 24});
  auto second = OpenIndex(registry_, url);
  ASSERT_TRUE(second.ok()) << second.status().message();
  EXPECT_NE(first->crc32c, second->crc32c);
}

TEST(IndexUrlTest, QueryOfAnHttpUrlStaysAtTheEnd) {
  EXPECT_EQ(IndexUrlFor("https://h/ds/train.index.json?q=1"), "https://h/ds/train.index.json?q=1");
  EXPECT_EQ(IndexUrlFor("https://h/ds/train?tok=1"), "https://h/ds/train.index.json?tok=1");
  EXPECT_EQ(IndexUrlFor("s3://b/ds/train"), "s3://b/ds/train.index.json");
}

}  // namespace
}  // namespace ferry::shard
