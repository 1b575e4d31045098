// The blob cache of `ferry serve` over a real S3 bucket (Ceph RGW): two caches with their own S3
// stores (as two `ferry serve` processes would have) share one bucket without locks.
#include <gtest/gtest.h>

#include <thread>

#include "proxy/blob_cache.h"
#include "proxy/testing/blob_test_util.h"
#include "proxy/testing/fake_fetcher.h"
#include "rgw_env.h"
#include "storage/s3/s3_store.h"

namespace ferry::proxy {
namespace {

using ferry::testing::RgwStoreOptions;
using testing::DigestOf;
using testing::DrainOrError;
using testing::FakeFetcher;
using testing::RandomBytes;

class ProxyCacheS3Test : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.prefix = "proxy-cache-" + std::to_string(::getpid()) + "/" +
                      ::testing::UnitTest::GetInstance()->current_test_info()->name() + "/";
  }
  void TearDown() override {
    auto store = storage::MakeS3Store(RgwStoreOptions());
    storage::ListOptions list;
    list.prefix = options_.prefix;
    store
        ->ListAll(list,
                  [&](const storage::ListPage& page) {
                    for (const auto& o : page.objects) store->Delete(o.key).IgnoreError();
                    return Status::Ok();
                  })
        .IgnoreError();
  }
  std::unique_ptr<BlobCache> NewCache(const std::string& instance) {
    BlobCacheOptions o = options_;
    o.instance = instance;
    auto cache = BlobCache::Create(storage::MakeS3Store(RgwStoreOptions()), o);
    EXPECT_TRUE(cache.ok()) << cache.status().ToString();
    return std::move(cache).value();
  }
  std::vector<std::string> Keys() {
    auto store = storage::MakeS3Store(RgwStoreOptions());
    std::vector<std::string> keys;
    storage::ListOptions list;
    list.prefix = options_.prefix + "blobs/";
    EXPECT_TRUE(store
                    ->ListAll(list,
                              [&](const storage::ListPage& page) {
                                for (const auto& o : page.objects) keys.push_back(o.key);
                                return Status::Ok();
                              })
                    .ok());
    return keys;
  }
  BlobCacheOptions options_;
};

TEST_F(ProxyCacheS3Test, TwoCachesPublishTheSameMultipartBlobConcurrently) {
  auto a = NewCache("a");
  auto b = NewCache("b");
  std::string data = RandomBytes(12 << 20, 1);  // more than one S3 part
  Digest d = DigestOf(data);
  auto ua = std::make_shared<FakeFetcher>(data, 256 << 10);
  auto ub = std::make_shared<FakeFetcher>(data, 256 << 10);
  std::string ga, gb;
  std::thread ta([&] { ga = DrainOrError(a->Open(d, data.size(), ua)); });
  std::thread tb([&] { gb = DrainOrError(b->Open(d, data.size(), ub)); });
  ta.join();
  tb.join();
  EXPECT_TRUE(ga == data) << ga.substr(0, 200);
  EXPECT_TRUE(gb == data) << gb.substr(0, 200);
  EXPECT_EQ(Keys(), std::vector<std::string>{a->blobs().KeyFor(d)});
  // A third process finds it published: a hit, no upstream request.
  auto c = NewCache("c");
  auto uc = std::make_shared<FakeFetcher>(data);
  auto r = c->Open(d, data.size(), uc, storage::ByteRange{(6 << 20) - 5, 10});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)->source(), ReadSource::kHit);
  EXPECT_EQ(DrainOrError(std::move(r)), data.substr((6 << 20) - 5, 10));
  EXPECT_EQ(uc->calls(), 0);
}

TEST_F(ProxyCacheS3Test, CorruptOrTruncatedUpstreamLeavesNothingInTheBucket) {
  auto cache = NewCache("a");
  std::string data = RandomBytes(7 << 20, 2);
  Digest d = DigestOf(data);
  auto corrupt = std::make_shared<FakeFetcher>(data, 256 << 10);
  corrupt->CorruptAt(data.size() - 1);
  EXPECT_NE(DrainOrError(cache->Open(d, data.size(), corrupt)).find("DATA_LOSS"),
            std::string::npos);
  auto truncated = std::make_shared<FakeFetcher>(data, 256 << 10);
  truncated->TruncateAt(6 << 20);
  EXPECT_NE(DrainOrError(cache->Open(d, data.size(), truncated)).find("DATA_LOSS"),
            std::string::npos);
  EXPECT_TRUE(Keys().empty());
  auto good = std::make_shared<FakeFetcher>(data, 256 << 10);
  EXPECT_TRUE(DrainOrError(cache->Open(d, data.size(), good)) == data);
  EXPECT_EQ(Keys().size(), 1u);
}

}  // namespace
}  // namespace ferry::proxy
