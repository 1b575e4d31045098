#include "proxy/blob_store.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
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

// A spool file the caller filled: the local store takes it by a link (written once), the memory
// store gets the bytes; a mismatch publishes nothing either way.
TEST_P(BlobStoreTest, ASpoolFileBecomesTheBlobWhereTheStoreCanLinkIt) {
  BlobStore blobs(store_, "c/");
  std::string spool = (dir_.empty() ? std::filesystem::temp_directory_path() : dir_) /
                      ("spool-" + std::to_string(::getpid()));
  std::string data = RandomBytes(300000);
  Digest d = DigestOf(data);
  std::ofstream(spool, std::ios::binary) << data;
  auto bad = blobs.NewWriter(DigestOf("other"), data.size(), spool);
  ASSERT_TRUE(bad.ok());
  ASSERT_TRUE((*bad)->Append(data).ok());
  EXPECT_EQ((*bad)->Finish().code(), StatusCode::kDataLoss);
  EXPECT_EQ(blobs.Stat(DigestOf("other")).status().code(), StatusCode::kNotFound);
  auto w = blobs.NewWriter(d, data.size(), spool);
  ASSERT_TRUE(w.ok());
  EXPECT_EQ((*w)->links(), GetParam() == "local");
  ASSERT_TRUE((*w)->Append(data).ok());
  ASSERT_TRUE((*w)->Finish().ok());
  EXPECT_EQ(*store_->ReadAll(blobs.KeyFor(d)), data);
  if (GetParam() == "local") {
    EXPECT_EQ(std::filesystem::hard_link_count(spool), 2u);  // the same file, not a copy
    EXPECT_EQ(*blobs.LocalPathFor(d), (dir_ / blobs.KeyFor(d)).string());
  }
  std::filesystem::remove(spool);
}

TEST(BlobStoreLinkTest, ASpoolOnAnotherFilesystemIsCopiedOnceThenWrittenThroughAWriter) {
  auto dir =
      std::filesystem::temp_directory_path() / ("ferry-bloblink-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  struct stat shm, here;
  if (::stat("/dev/shm", &shm) != 0 || ::stat(dir.c_str(), &here) != 0 ||
      shm.st_dev == here.st_dev) {
    std::filesystem::remove_all(dir);
    GTEST_SKIP() << "no second filesystem at /dev/shm";
  }
  BlobStore blobs(storage::MakeLocalStore(dir.string()));
  std::string spool = "/dev/shm/ferry-bloblink-" + std::to_string(::getpid());
  for (std::string data : {RandomBytes(200000), RandomBytes(3 << 20)}) {
    std::ofstream(spool, std::ios::binary | std::ios::trunc) << data;
    auto w = blobs.NewWriter(DigestOf(data), data.size(), spool);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->Append(data).ok());
    ASSERT_TRUE((*w)->Finish().ok());
    EXPECT_EQ(*blobs.store().ReadAll(blobs.KeyFor(DigestOf(data))), data);
    EXPECT_EQ(std::filesystem::hard_link_count(spool), 1u);
  }
  EXPECT_FALSE((*blobs.NewWriter(DigestOf("z"), 1, spool))->links());  // refused once: no more
  std::filesystem::remove(spool);
  std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Stores, BlobStoreTest, ::testing::Values("memory", "local"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace ferry::proxy
