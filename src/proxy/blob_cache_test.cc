#include "proxy/blob_cache.h"

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "proxy/store_fetcher.h"
#include "proxy/testing/blob_test_util.h"
#include "proxy/testing/fake_fetcher.h"
#include "storage/local/local_store.h"
#include "storage/memory/memory_store.h"
#include "storage/store_wrapper.h"

namespace ferry::proxy {
namespace {

using namespace std::chrono_literals;
using testing::DigestOf;
using testing::Drain;
using testing::DrainOrError;
using testing::FakeFetcher;
using testing::RandomBytes;

// Runs over the memory store and the local store (the same code serves S3 and a NAS path).
class BlobCacheTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ferry-blobcache-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_ / "store");
    std::filesystem::create_directories(dir_ / "spool");
    store_ = NewStore();
    options_.fetch.spool_dir = (dir_ / "spool").string();
    options_.fetch.stall_timeout = 5s;
    options_.fetch.retry_delay = 1ms;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::shared_ptr<storage::Store> NewStore() {
    if (GetParam() == "memory") {
      if (memory_ == nullptr) memory_ = storage::MakeMemoryStore();
      return memory_;
    }
    return storage::MakeLocalStore((dir_ / "store").string());
  }
  std::unique_ptr<BlobCache> NewCache() {
    auto cache = BlobCache::Create(NewStore(), options_);
    EXPECT_TRUE(cache.ok()) << cache.status().ToString();
    return std::move(cache).value();
  }
  bool SpoolIsEmpty() { return std::filesystem::is_empty(dir_ / "spool"); }

  std::filesystem::path dir_;
  std::shared_ptr<storage::Store> memory_;
  std::shared_ptr<storage::Store> store_;
  BlobCacheOptions options_;
};

TEST_P(BlobCacheTest, MissFetchesOncePublishesThenHits) {
  auto cache = NewCache();
  std::string data = RandomBytes(200000);
  Digest d = DigestOf(data);
  auto up = std::make_shared<FakeFetcher>(data);
  {
    auto r = cache->Open(d, data.size(), up);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ((*r)->source(), ReadSource::kMiss);
    auto got = Drain(**r);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_TRUE(*got == data);
  }
  // Drained to the end means verified and published.
  EXPECT_EQ(*cache->blobs().Stat(d), data.size());
  auto r = cache->Open(d, data.size(), up);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)->source(), ReadSource::kHit);
  EXPECT_TRUE(*Drain(**r) == data);
  EXPECT_EQ(up->calls(), 1);
  CacheMetrics m = cache->metrics();
  EXPECT_EQ(m.misses, 1u);
  EXPECT_EQ(m.hits, 1u);
  EXPECT_EQ(m.published, 1u);
  EXPECT_EQ(m.bytes_fetched, data.size());
  EXPECT_EQ(m.bytes_served, 2 * data.size());
}

TEST_P(BlobCacheTest, SixteenConcurrentReadersMakeOneFetchAndGetIdenticalBytes) {
  auto cache = NewCache();
  std::string data = RandomBytes(1 << 20, 3);
  Digest d = DigestOf(data);
  auto up = std::make_shared<FakeFetcher>(data, 16384);
  up->Pace(1ms);
  std::vector<std::thread> threads;
  std::vector<std::string> got(16);
  std::vector<Status> errors(16);
  for (int i = 0; i < 16; ++i) {
    threads.emplace_back([&, i] {
      auto r = cache->Open(d, data.size(), up);
      if (!r.ok()) {
        errors[i] = r.status();
        return;
      }
      auto s = Drain(**r, 1000 + 977 * i);
      if (s.ok()) {
        got[i] = *s;
      } else {
        errors[i] = s.status();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int i = 0; i < 16; ++i) {
    EXPECT_TRUE(errors[i].ok()) << errors[i].ToString();
    EXPECT_TRUE(got[i] == data) << "reader " << i;
  }
  EXPECT_EQ(up->calls(), 1);
  EXPECT_EQ(cache->metrics().bytes_fetched, data.size());
  EXPECT_TRUE(SpoolIsEmpty());  // the spool file goes once the blob is published
}

TEST_P(BlobCacheTest, ReaderJoiningMidDownloadGetsEverything) {
  auto cache = NewCache();
  std::string data = RandomBytes(256 * 1024, 4);
  Digest d = DigestOf(data);
  auto up = std::make_shared<FakeFetcher>(data, 4096);
  up->Pace(2ms);
  auto first = cache->Open(d, data.size(), up);
  ASSERT_TRUE(first.ok());
  std::string buf(50000, '\0');
  size_t have = 0;
  while (have < 50000) have += *(*first)->Read(buf.data() + have, 50000 - have);
  auto second = cache->Open(d, data.size(), up);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ((*second)->source(), ReadSource::kJoined);
  auto all = Drain(**second);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_TRUE(*all == data);
  auto rest = Drain(**first);
  ASSERT_TRUE(rest.ok());
  EXPECT_TRUE(buf + *rest == data);
  EXPECT_EQ(up->calls(), 1);
}

TEST_P(BlobCacheTest, RangesBeforeWithinAndAfterTheFetchedPart) {
  auto cache = NewCache();
  std::string data = RandomBytes(512 * 1024, 5);
  Digest d = DigestOf(data);
  auto up = std::make_shared<FakeFetcher>(data, 8192);
  up->StallAt(100000);
  auto whole = cache->Open(d, data.size(), up);
  ASSERT_TRUE(whole.ok());
  while (cache->metrics().bytes_fetched < 100000) std::this_thread::sleep_for(1ms);
  // Within the fetched part: served from the spool at once.
  auto within = cache->Open(d, data.size(), up, storage::ByteRange{1000, 5000});
  ASSERT_TRUE(within.ok());
  EXPECT_EQ((*within)->source(), ReadSource::kJoined);
  EXPECT_TRUE(*Drain(**within) == data.substr(1000, 5000));
  // Just ahead of it: waits for the fetch.
  std::string ahead;
  std::thread t([&] {
    auto r = cache->Open(d, data.size(), up, storage::ByteRange{150000, 1000});
    ahead = DrainOrError(std::move(r));
  });
  std::this_thread::sleep_for(50ms);
  up->Release();
  t.join();
  EXPECT_TRUE(ahead == data.substr(150000, 1000));
  // After the end of the blob: kOutOfRange; a range cut at the end.
  EXPECT_EQ(cache->Open(d, data.size(), up, storage::ByteRange{data.size(), 1}).status().code(),
            StatusCode::kOutOfRange);
  auto tail = cache->Open(d, data.size(), up, storage::ByteRange{data.size() - 10, 100});
  ASSERT_TRUE(tail.ok());
  EXPECT_TRUE(*Drain(**tail) == data.substr(data.size() - 10));
  EXPECT_TRUE(*Drain(**whole) == data);
  EXPECT_EQ(up->calls(), 1);
}

TEST_P(BlobCacheTest, ColdRangeOnTheTailIsReadDirectlyWithoutWaitingForTheFill) {
  options_.direct_range_distance = 64 * 1024;
  auto cache = NewCache();
  std::string data = RandomBytes(1 << 20, 6);
  Digest d = DigestOf(data);
  auto up = std::make_shared<FakeFetcher>(data, 4096);
  up->StallAt(8192);  // the fill crawls; the tail must not wait for it
  auto tail = cache->Open(d, data.size(), up, storage::ByteRange{data.size() - 22, std::nullopt});
  ASSERT_TRUE(tail.ok()) << tail.status().ToString();
  EXPECT_EQ((*tail)->source(), ReadSource::kDirect);
  auto got = Drain(**tail);
  up->Release();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(*got == data.substr(data.size() - 22));
  EXPECT_EQ(cache->metrics().direct_range_reads, 1u);
  EXPECT_EQ(cache->metrics().misses, 1u);  // the fill was started as well
}

TEST_P(BlobCacheTest, CorruptUpstreamIsNeverPublishedEveryReaderErrsAndRetryWorks) {
  auto cache = NewCache();
  std::string data = RandomBytes(100000, 8);
  Digest d = DigestOf(data);
  auto bad = std::make_shared<FakeFetcher>(data);
  bad->CorruptAt(99000);
  bad->Pace(1ms);
  auto r1 = cache->Open(d, data.size(), bad);
  auto r2 = cache->Open(d, data.size(), bad);
  ASSERT_TRUE(r1.ok() && r2.ok());
  auto g1 = Drain(**r1);
  auto g2 = Drain(**r2);
  EXPECT_EQ(g1.status().code(), StatusCode::kDataLoss) << g1.status().ToString();
  EXPECT_EQ(g2.status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(bad->calls(), 1);
  EXPECT_EQ(cache->blobs().Stat(d).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(cache->metrics().fetch_failures, 1u);
  // The next request fetches again.
  auto good = std::make_shared<FakeFetcher>(data);
  auto r3 = cache->Open(d, data.size(), good);
  ASSERT_TRUE(r3.ok());
  EXPECT_EQ((*r3)->source(), ReadSource::kMiss);
  EXPECT_TRUE(*Drain(**r3) == data);
  EXPECT_EQ(good->offsets(), std::vector<uint64_t>{0});  // a corrupt spool is not resumed
  EXPECT_EQ(*cache->blobs().Stat(d), data.size());
}

TEST_P(BlobCacheTest, TruncatedUpstreamIsAnErrorAndNothingIsCached) {
  auto cache = NewCache();
  std::string data = RandomBytes(100000, 9);
  Digest d = DigestOf(data);
  auto up = std::make_shared<FakeFetcher>(data);
  up->TruncateAt(60000);
  auto r = cache->Open(d, data.size(), up);
  ASSERT_TRUE(r.ok());
  auto got = Drain(**r);
  EXPECT_EQ(got.status().code(), StatusCode::kDataLoss) << got.status().ToString();
  EXPECT_EQ(cache->blobs().Stat(d).status().code(), StatusCode::kNotFound);
  auto scan = cache->blobs().Scan();
  EXPECT_TRUE(scan->blobs.empty());
}

TEST_P(BlobCacheTest, StalledUpstreamTimesOutAndTheNextRequestRetries) {
  options_.fetch.stall_timeout = 200ms;
  auto cache = NewCache();
  std::string data = RandomBytes(100000, 10);
  Digest d = DigestOf(data);
  auto up = std::make_shared<FakeFetcher>(data);
  up->StallAt(30000);
  auto r = cache->Open(d, data.size(), up);
  ASSERT_TRUE(r.ok());
  auto start = std::chrono::steady_clock::now();
  auto got = Drain(**r);
  EXPECT_EQ(got.status().code(), StatusCode::kDeadlineExceeded) << got.status().ToString();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
  up->Release();
  auto good = std::make_shared<FakeFetcher>(data);
  auto again = cache->Open(d, data.size(), good);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)->source(), ReadSource::kMiss);
  EXPECT_TRUE(*Drain(**again) == data);
  EXPECT_EQ(good->offsets(), std::vector<uint64_t>{30000});  // resumed after the stall
}

TEST_P(BlobCacheTest, ASpoolFileThatIsAlsoAnotherFilesNameIsNeverWrittenOrResumed) {
  // A kill -9 between linking a spool file as the blob and removing the spool name leaves the
  // name on the blob's file: the next fetch must neither resume from it nor write into it.
  auto cache = NewCache();
  std::string data = RandomBytes(300000, 17);
  Digest d = DigestOf(data);
  auto spool = dir_ / "spool" / ("ferry-default-sha256-" + d.hex + ".partial");
  auto other = dir_ / "published";
  std::string foreign = RandomBytes(200000, 18);
  std::ofstream(other, std::ios::binary) << foreign;
  std::filesystem::create_hard_link(other, spool);
  auto up = std::make_shared<FakeFetcher>(data);
  auto r = cache->Open(d, data.size(), up);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(*Drain(**r) == data);
  EXPECT_EQ(up->offsets(), std::vector<uint64_t>{0});  // not resumed from the foreign bytes
  std::ifstream in(other, std::ios::binary);
  EXPECT_TRUE(std::string(std::istreambuf_iterator<char>(in), {}) == foreign);
}

TEST_P(BlobCacheTest, CancelUnblocksAWaitingReaderAndTheFetchGoesOn) {
  auto cache = NewCache();
  std::string data = RandomBytes(100000, 13);
  Digest d = DigestOf(data);
  auto up = std::make_shared<FakeFetcher>(data);
  up->StallAt(50000);
  auto a = cache->Open(d, data.size(), up);
  auto b = cache->Open(d, data.size(), up);
  ASSERT_TRUE(a.ok() && b.ok());
  Status a_status;
  auto start = std::chrono::steady_clock::now();
  std::thread t([&] { a_status = Drain(**a).status(); });
  std::this_thread::sleep_for(100ms);
  (*a)->Cancel();
  t.join();
  EXPECT_EQ(a_status.code(), StatusCode::kCancelled) << a_status.ToString();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);  // well before the 5 s stall timeout
  up->Release();
  EXPECT_TRUE(DrainOrError(std::move(b)) == data);
  EXPECT_EQ(*cache->blobs().Stat(d), data.size());
  EXPECT_EQ(up->calls(), 1);
}

TEST_P(BlobCacheTest, RetryableErrorsResumeFromTheLastByteReceived) {
  auto cache = NewCache();
  std::string data = RandomBytes(64 * 1024, 11);
  Digest d = DigestOf(data);
  auto up = std::make_shared<FakeFetcher>(data, 4096);
  up->FailAfter(10000, 2);  // each of the first two calls resets after 3 chunks
  auto r = cache->Open(d, data.size(), up);
  ASSERT_TRUE(r.ok());
  auto got = Drain(**r);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(*got == data);
  EXPECT_EQ(up->calls(), 3);
  EXPECT_EQ(up->offsets(), (std::vector<uint64_t>{0, 12288, 24576}));
  EXPECT_EQ(cache->metrics().bytes_fetched, data.size());
  EXPECT_EQ(*cache->blobs().Stat(d), data.size());
}

TEST_P(BlobCacheTest, GivesUpAfterRepeatedRetryableErrorsWithoutProgress) {
  options_.fetch.max_attempts = 3;
  auto cache = NewCache();
  std::string data = RandomBytes(10000, 12);
  auto up = std::make_shared<FakeFetcher>(data);
  up->FailAfter(0, 100);  // every call fails before its first byte
  auto r = cache->Open(DigestOf(data), data.size(), up);
  ASSERT_TRUE(r.ok());
  auto got = Drain(**r);
  EXPECT_EQ(got.status().code(), StatusCode::kUnavailable) << got.status().ToString();
  EXPECT_NE(got.status().message().find("gave up after 3 attempts"), std::string::npos);
  EXPECT_EQ(up->calls(), 3);
  EXPECT_TRUE(SpoolIsEmpty());  // nothing received, nothing kept
}

TEST_P(BlobCacheTest, EvictsLeastRecentlyUsedBlobsUnderTheCap) {
  options_.max_bytes = 25000;
  auto cache = NewCache();
  std::vector<std::string> blobs = {RandomBytes(10000, 20), RandomBytes(10000, 21),
                                    RandomBytes(10000, 22)};
  auto read = [&](int i) {
    auto r =
        cache->Open(DigestOf(blobs[i]), blobs[i].size(), std::make_shared<FakeFetcher>(blobs[i]));
    ASSERT_TRUE(r.ok());
    ASSERT_TRUE(*Drain(**r) == blobs[i]);
  };
  read(0);
  std::this_thread::sleep_for(5ms);
  read(1);
  std::this_thread::sleep_for(5ms);
  read(0);  // a hit: 0 is now newer than 1
  std::this_thread::sleep_for(5ms);
  read(2);  // over the cap: 1 goes
  // Eviction runs right after the publish, on the fetch thread; give it a moment.
  for (int i = 0; i < 200 && cache->metrics().evictions == 0; ++i) std::this_thread::sleep_for(5ms);
  EXPECT_EQ(cache->metrics().evictions, 1u);
  EXPECT_TRUE(cache->blobs().Stat(DigestOf(blobs[0])).ok());
  EXPECT_EQ(cache->blobs().Stat(DigestOf(blobs[1])).status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(cache->blobs().Stat(DigestOf(blobs[2])).ok());
  EXPECT_LE(cache->cached_bytes(), 25000u);
}

TEST_P(BlobCacheTest, RestartSeesPublishedBlobsAndAccessTimes) {
  std::string data = RandomBytes(30000, 30);
  Digest d = DigestOf(data);
  {
    auto cache = NewCache();
    auto r = cache->Open(d, data.size(), std::make_shared<FakeFetcher>(data));
    ASSERT_TRUE(r.ok());
    ASSERT_TRUE(*Drain(**r) == data);
  }
  auto cache = NewCache();
  EXPECT_EQ(cache->cached_bytes(), data.size());
  auto up = std::make_shared<FakeFetcher>(data);
  auto r = cache->Open(d, data.size(), up);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)->source(), ReadSource::kHit);
  EXPECT_TRUE(*Drain(**r) == data);
  EXPECT_EQ(up->calls(), 0);
  EXPECT_TRUE(NewStore()->Stat("state/access-default.tsv").ok());
}

TEST_P(BlobCacheTest, AnInterruptedFetchLeavesNothingThatIsServed) {
  std::string data = RandomBytes(100000, 31);
  Digest d = DigestOf(data);
  {
    auto cache = NewCache();
    auto up = std::make_shared<FakeFetcher>(data);
    up->StallAt(50000);
    auto r = cache->Open(d, data.size(), up);
    ASSERT_TRUE(r.ok());
    while (cache->metrics().bytes_fetched < 50000) std::this_thread::sleep_for(1ms);
    r->reset();
    // The cache closes with the fetch half done: it is cancelled, not published. (The fake
    // upstream wakes up after the cancel, as a real one's low-speed limit would end it.)
    std::thread([up] {
      std::this_thread::sleep_for(100ms);
      up->Release();
    }).detach();
  }
  auto cache = NewCache();
  EXPECT_EQ(cache->cached_bytes(), 0u);
  EXPECT_EQ(cache->blobs().Stat(d).status().code(), StatusCode::kNotFound);
  auto up = std::make_shared<FakeFetcher>(data);
  auto r = cache->Open(d, data.size(), up);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)->source(), ReadSource::kMiss);
  EXPECT_TRUE(*Drain(**r) == data);
  // Resumed from the spool file the cancelled fetch left.
  EXPECT_EQ(up->offsets(), std::vector<uint64_t>{50000});
  EXPECT_TRUE(SpoolIsEmpty());
}

TEST_P(BlobCacheTest, TwoCachesOnOneStorePublishTheSameBlobConcurrently) {
  auto a = NewCache();
  auto b = NewCache();
  std::string data = RandomBytes(500000, 40);
  Digest d = DigestOf(data);
  auto ua = std::make_shared<FakeFetcher>(data, 8192);
  auto ub = std::make_shared<FakeFetcher>(data, 8192);
  ua->Pace(1ms);
  ub->Pace(1ms);
  std::string ga, gb;
  std::thread ta([&] { ga = DrainOrError(a->Open(d, data.size(), ua)); });
  std::thread tb([&] { gb = DrainOrError(b->Open(d, data.size(), ub)); });
  ta.join();
  tb.join();
  EXPECT_TRUE(ga == data);
  EXPECT_TRUE(gb == data);
  auto stored = NewStore()->ReadAll(a->blobs().KeyFor(d));
  ASSERT_TRUE(stored.ok());
  EXPECT_TRUE(*stored == data);
}

// A store whose writes fail as on a full disk (a spool file linked in: the new name's directory
// entry finds no room).
class FullDiskStore final : public storage::StoreWrapper {
 public:
  using StoreWrapper::StoreWrapper;
  Result<storage::ObjectInfo> LinkLocalFile(std::string_view, const std::string&,
                                            const storage::WriteOptions&) override {
    return Status(StatusCode::kResourceExhausted, "link: No space left on device");
  }
  Result<std::unique_ptr<storage::Writer>> NewWriter(std::string_view key,
                                                     const storage::WriteOptions& o) override {
    class Full final : public storage::Writer {
     public:
      explicit Full(std::unique_ptr<storage::Writer> w) : w_(std::move(w)) {}
      Status Append(std::string_view) override {
        return Status(StatusCode::kResourceExhausted, "write: No space left on device");
      }
      Result<storage::ObjectInfo> Commit() override { return w_->Commit(); }
      void Abort() override { w_->Abort(); }

     private:
      std::unique_ptr<storage::Writer> w_;
    };
    FERRY_ASSIGN_OR_RETURN(auto w, inner().NewWriter(key, o));
    return std::unique_ptr<storage::Writer>(new Full(std::move(w)));
  }
};

TEST_P(BlobCacheTest, FullDiskIsAClearErrorAndNothingIsPublished) {
  auto full = std::make_shared<FullDiskStore>(NewStore());
  auto cache = BlobCache::Create(full, options_);
  ASSERT_TRUE(cache.ok());
  std::string data = RandomBytes(50000, 50);
  Digest d = DigestOf(data);
  auto r = (*cache)->Open(d, data.size(), std::make_shared<FakeFetcher>(data));
  ASSERT_TRUE(r.ok());
  auto got = Drain(**r);
  EXPECT_EQ(got.status().code(), StatusCode::kResourceExhausted) << got.status().ToString();
  EXPECT_NE(got.status().message().find("No space left"), std::string::npos);
  EXPECT_EQ((*cache)->blobs().Stat(d).status().code(), StatusCode::kNotFound);
}

// A store whose writer takes its time with one chunk (an S3 part upload on a slow link). No
// local files: every byte goes through that writer.
class SlowWriteStore final : public storage::StoreWrapper {
 public:
  using StoreWrapper::StoreWrapper;
  std::optional<std::string> LocalPathFor(std::string_view) const override { return std::nullopt; }
  Result<std::unique_ptr<storage::Writer>> NewWriter(std::string_view key,
                                                     const storage::WriteOptions& o) override {
    class Slow final : public storage::Writer {
     public:
      explicit Slow(std::unique_ptr<storage::Writer> w) : w_(std::move(w)) {}
      Status Append(std::string_view data) override {
        if (++appends_ == 3) std::this_thread::sleep_for(600ms);
        return w_->Append(data);
      }
      Result<storage::ObjectInfo> Commit() override { return w_->Commit(); }
      void Abort() override { w_->Abort(); }

     private:
      std::unique_ptr<storage::Writer> w_;
      int appends_ = 0;
    };
    FERRY_ASSIGN_OR_RETURN(auto w, inner().NewWriter(key, o));
    return std::unique_ptr<storage::Writer>(new Slow(std::move(w)));
  }
};

TEST_P(BlobCacheTest, ASlowStoreIsNotTakenForAStalledUpstream) {
  options_.fetch.stall_timeout = 200ms;
  auto cache = BlobCache::Create(std::make_shared<SlowWriteStore>(NewStore()), options_);
  ASSERT_TRUE(cache.ok());
  std::string data = RandomBytes(50000, 51);
  Digest d = DigestOf(data);
  EXPECT_TRUE(DrainOrError((*cache)->Open(d, data.size(), std::make_shared<FakeFetcher>(data))) ==
              data);
  EXPECT_TRUE((*cache)->blobs().Stat(d).ok());
}

TEST_P(BlobCacheTest, VerifyDeletesABlobWhoseBytesRottedAndItIsFetchedAgain) {
  auto cache = NewCache();
  std::string data = RandomBytes(40000, 52);
  Digest d = DigestOf(data);
  EXPECT_TRUE(DrainOrError(cache->Open(d, data.size(), std::make_shared<FakeFetcher>(data))) ==
              data);
  EXPECT_TRUE(cache->Verify(d).ok());
  std::string rotten = data;
  rotten[123] ^= 1;
  ASSERT_TRUE(NewStore()->WriteAll(cache->blobs().KeyFor(d), rotten).ok());  // another program
  Status st = cache->Verify(d);
  EXPECT_EQ(st.code(), StatusCode::kDataLoss) << st.ToString();
  EXPECT_EQ(cache->blobs().Stat(d).status().code(), StatusCode::kNotFound);
  auto up = std::make_shared<FakeFetcher>(data);
  EXPECT_TRUE(DrainOrError(cache->Open(d, data.size(), up)) == data);
  EXPECT_EQ(up->calls(), 1);
  EXPECT_EQ(cache->Verify(DigestOf("absent")).code(), StatusCode::kNotFound);
}

TEST_P(BlobCacheTest, OldPartialDownloadsAreRemovedAtStartup) {
  auto old_partial = dir_ / "spool" / ("ferry-default-sha256-" + std::string(64, 'a') + ".partial");
  auto new_partial = dir_ / "spool" / ("ferry-default-sha256-" + std::string(64, 'b') + ".partial");
  auto other = dir_ / "spool" / "someone-elses.partial";
  for (const auto& p : {old_partial, new_partial, other}) {
    FILE* f = std::fopen(p.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fclose(f);
  }
  std::filesystem::last_write_time(old_partial,
                                   std::filesystem::file_time_type::clock::now() - 48h);
  auto cache = NewCache();
  EXPECT_FALSE(std::filesystem::exists(old_partial));
  EXPECT_TRUE(std::filesystem::exists(new_partial));
  EXPECT_TRUE(std::filesystem::exists(other));
}

TEST_P(BlobCacheTest, GitBlobSha1Blobs) {
  auto cache = NewCache();
  std::string data = "{\"model_type\": \"bert\"}\n";
  Digest d = DigestOf(data, DigestAlgorithm::kGitBlobSha1);
  auto r = cache->Open(d, data.size(), std::make_shared<FakeFetcher>(data));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*Drain(**r), data);
  EXPECT_TRUE(cache->blobs().Stat(d).ok());
}

TEST_P(BlobCacheTest, FillsFromAnUpstreamStore) {
  auto cache = NewCache();
  auto upstream = storage::MakeMemoryStore("upstream");
  std::string data = RandomBytes(123456, 70);
  ASSERT_TRUE(upstream->WriteAll("pkgs/x-1.0-py3-none-any.whl", data).ok());
  auto fetcher = std::make_shared<StoreFetcher>(upstream, "pkgs/x-1.0-py3-none-any.whl");
  EXPECT_EQ(fetcher->Describe(), upstream->UrlFor("pkgs/x-1.0-py3-none-any.whl"));
  Digest d = DigestOf(data);
  EXPECT_TRUE(DrainOrError(cache->Open(d, data.size(), fetcher)) == data);
  EXPECT_EQ(*cache->blobs().Stat(d), data.size());
  // The wrong expected digest: nothing published.
  Digest wrong = DigestOf("something else");
  EXPECT_NE(DrainOrError(cache->Open(wrong, data.size(), fetcher)).find("DATA_LOSS"),
            std::string::npos);
  EXPECT_EQ(cache->blobs().Stat(wrong).status().code(), StatusCode::kNotFound);
}

// kill -9 of a real process in the middle of a fetch into a local directory: nothing is left
// that a new cache would serve, and the blob is fetched again.
TEST(BlobCacheCrashTest, KillNineMidFetchLeavesNothingThatIsServed) {
  auto dir = std::filesystem::temp_directory_path() /
             ("ferry-blobcache-kill-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "store");
  std::filesystem::create_directories(dir / "spool");
  BlobCacheOptions options;
  options.fetch.spool_dir = (dir / "spool").string();
  std::string data = RandomBytes(200000, 60);
  Digest d = DigestOf(data);
  const auto ready = dir / "ready";
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {  // the child: no gtest assertions, just work and wait to be killed
    auto cache = BlobCache::Create(storage::MakeLocalStore((dir / "store").string()), options);
    if (!cache.ok()) ::_exit(2);
    auto up = std::make_shared<FakeFetcher>(data);
    up->StallAt(150000);
    auto r = (*cache)->Open(d, data.size(), up);
    if (!r.ok()) ::_exit(3);
    std::string buf(150000, '\0');
    size_t have = 0;
    while (have < buf.size()) {
      auto n = (*r)->Read(buf.data() + have, buf.size() - have);
      if (!n.ok()) ::_exit(4);
      have += *n;
    }
    FILE* f = std::fopen(ready.c_str(), "w");
    if (f != nullptr) std::fclose(f);
    std::this_thread::sleep_for(60s);
    ::_exit(5);
  }
  for (int i = 0; i < 1000 && !std::filesystem::exists(ready); ++i) {
    std::this_thread::sleep_for(10ms);
  }
  ASSERT_TRUE(std::filesystem::exists(ready));
  ::kill(pid, SIGKILL);
  int wstatus = 0;
  ::waitpid(pid, &wstatus, 0);
  EXPECT_TRUE(WIFSIGNALED(wstatus));
  // No file at all under the store (the local writer's temporary is unnamed or hidden) and
  // nothing in the spool directory.
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir / "store")) {
    EXPECT_FALSE(e.is_regular_file()) << e.path();
  }
  // The spool file stays for the next fetch to resume.
  EXPECT_FALSE(std::filesystem::is_empty(dir / "spool"));
  auto cache = BlobCache::Create(storage::MakeLocalStore((dir / "store").string()), options);
  ASSERT_TRUE(cache.ok());
  EXPECT_EQ((*cache)->cached_bytes(), 0u);
  auto up = std::make_shared<FakeFetcher>(data);
  auto r = (*cache)->Open(d, data.size(), up);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)->source(), ReadSource::kMiss);
  EXPECT_TRUE(DrainOrError(std::move(r)) == data);
  // The download resumed where the killed process stopped.
  EXPECT_EQ(up->offsets(), std::vector<uint64_t>{150000});
  EXPECT_EQ((*cache)->metrics().resumed_bytes, 150000u);
  EXPECT_TRUE(std::filesystem::is_empty(dir / "spool"));
  cache->reset();
  std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Stores, BlobCacheTest, ::testing::Values("memory", "local"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace ferry::proxy
