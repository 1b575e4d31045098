#include "proxy/blob_store.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "proxy/testing/blob_test_util.h"
#include "storage/local/local_store.h"
#include "storage/memory/memory_store.h"

namespace ferry::proxy {
namespace {

using testing::DigestOf;
using testing::RandomBytes;

// Every test runs over the memory store and the local store (a NAS path in production).
class BlobStoreTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "memory") {
      store_ = storage::MakeMemoryStore();
    } else {
      dir_ = std::filesystem::temp_directory_path() /
             ("ferry-blobstore-" + std::to_string(::getpid()) + "-" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name());
      std::filesystem::remove_all(dir_);
      std::filesystem::create_directories(dir_);
      store_ = storage::MakeLocalStore(dir_.string());
    }
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  std::shared_ptr<storage::Store> store_;
  std::filesystem::path dir_;
};

TEST_P(BlobStoreTest, KeyIsTheContentAddress) {
  BlobStore blobs(store_, "cache/");
  Digest d = DigestOf("x");
  EXPECT_EQ(blobs.KeyFor(d), "cache/blobs/sha256/" + d.hex.substr(0, 2) + "/" + d.hex);
  Digest g = DigestOf("x", DigestAlgorithm::kGitBlobSha1);
  EXPECT_EQ(blobs.KeyFor(g), "cache/blobs/git-sha1/" + g.hex.substr(0, 2) + "/" + g.hex);
}

TEST_P(BlobStoreTest, PublishesVerifiedContent) {
  BlobStore blobs(store_);
  std::string data = RandomBytes(100000);
  Digest d = DigestOf(data);
  auto w = blobs.NewWriter(d, data.size());
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_TRUE((*w)->Append(data.substr(0, 50000)).ok());
  EXPECT_EQ(blobs.Stat(d).status().code(), StatusCode::kNotFound);  // not before Finish
  ASSERT_TRUE((*w)->Append(data.substr(50000)).ok());
  ASSERT_TRUE((*w)->Finish().ok());
  EXPECT_EQ(*blobs.Stat(d), data.size());
  std::string back;
  ASSERT_TRUE(blobs
                  .Read(d, {10, 5},
                        [&](std::string_view c) {
                          back.append(c);
                          return Status::Ok();
                        })
                  .ok());
  EXPECT_EQ(back, data.substr(10, 5));
}

TEST_P(BlobStoreTest, CorruptTruncatedOrOversizeContentIsNeverPublished) {
  BlobStore blobs(store_);
  std::string data = RandomBytes(10000);
  Digest d = DigestOf(data);
  std::string bad = data;
  bad[5000] ^= 1;
  auto w = blobs.NewWriter(d, data.size());
  ASSERT_TRUE((*w)->Append(bad).ok());
  Status st = (*w)->Finish();
  EXPECT_EQ(st.code(), StatusCode::kDataLoss) << st.ToString();
  EXPECT_EQ(blobs.Stat(d).status().code(), StatusCode::kNotFound);

  w = blobs.NewWriter(d, data.size());
  ASSERT_TRUE((*w)->Append(data.substr(0, 9999)).ok());
  EXPECT_EQ((*w)->Finish().code(), StatusCode::kDataLoss);
  EXPECT_EQ(blobs.Stat(d).status().code(), StatusCode::kNotFound);

  w = blobs.NewWriter(d, data.size());
  EXPECT_EQ((*w)->Append(data + "x").code(), StatusCode::kDataLoss);
  EXPECT_EQ(blobs.Stat(d).status().code(), StatusCode::kNotFound);
}

TEST_P(BlobStoreTest, AbandonedWriterLeavesNothing) {
  BlobStore blobs(store_);
  std::string data = RandomBytes(10000);
  {
    auto w = blobs.NewWriter(DigestOf(data), data.size());
    ASSERT_TRUE((*w)->Append(data.substr(0, 4000)).ok());
  }
  auto scan = blobs.Scan();
  ASSERT_TRUE(scan.ok());
  EXPECT_TRUE(scan->blobs.empty());
  EXPECT_TRUE(scan->foreign.empty());
}

TEST_P(BlobStoreTest, TwoBlobStoresPublishTheSameBlobConcurrently) {
  BlobStore a(store_), b(store_);
  std::string data = RandomBytes(300000, 7);
  Digest d = DigestOf(data);
  auto write = [&](BlobStore& blobs, Status* out) {
    auto w = blobs.NewWriter(d, data.size());
    if (!w.ok()) {
      *out = w.status();
      return;
    }
    for (size_t i = 0; i < data.size(); i += 1000) {
      *out = (*w)->Append(data.substr(i, 1000));
      if (!out->ok()) return;
    }
    *out = (*w)->Finish();
  };
  for (int round = 0; round < 5; ++round) {
    Status sa, sb;
    std::thread ta(write, std::ref(a), &sa), tb(write, std::ref(b), &sb);
    ta.join();
    tb.join();
    EXPECT_TRUE(sa.ok()) << sa.ToString();
    EXPECT_TRUE(sb.ok()) << sb.ToString();
    auto back = store_->ReadAll(a.KeyFor(d));
    ASSERT_TRUE(back.ok());
    EXPECT_TRUE(*back == data);
  }
}

TEST_P(BlobStoreTest, ScanListsBlobsAndReportsForeignKeys) {
  BlobStore blobs(store_, "c/");
  std::string one = "one", two = "two";
  for (const std::string* s : {&one, &two}) {
    auto w = blobs.NewWriter(DigestOf(*s, DigestAlgorithm::kGitBlobSha1), s->size());
    ASSERT_TRUE((*w)->Append(*s).ok());
    ASSERT_TRUE((*w)->Finish().ok());
  }
  ASSERT_TRUE(store_->WriteAll("c/blobs/sha256/zz/not-a-digest", "x").ok());
  ASSERT_TRUE(store_->WriteAll("c/blobs/sha256/00/" + DigestOf("y").hex, "y").ok());  // wrong dir
  auto scan = blobs.Scan();
  ASSERT_TRUE(scan.ok()) << scan.status().ToString();
  EXPECT_EQ(scan->blobs.size(), 2u);
  EXPECT_EQ(scan->foreign.size(), 2u);
}

INSTANTIATE_TEST_SUITE_P(Stores, BlobStoreTest, ::testing::Values("memory", "local"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace ferry::proxy
