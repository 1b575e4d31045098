#include "tracker/artifacts/multipart.h"

#include <gtest/gtest.h>

#include <thread>

#include "base/crc32c.h"
#include "base/hash.h"
#include "base/strings.h"
#include "storage/memory/memory_store.h"
#include "tracker/artifacts/artifacts_test_util.h"

namespace ferry::tracker::artifacts {
namespace {

using testing::Bytes;
using testing::PiecewiseBody;

constexpr uint64_t kPart = 2 * kSubPartSize;

class MultipartTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "local") {
      dir_ = std::make_unique<testing::TempDir>("mpu");
      store_ = storage::MakeLocalStore(dir_->path());
    } else {
      store_ = storage::MakeMemoryStore();
    }
    uploads_ = std::make_unique<MultipartUploads>(store_, "art");
  }
  Result<PartInfo> Write(const std::string& id, int n, std::string data, bool fail = false) {
    PiecewiseBody body(std::move(data), 1 << 20, fail, std::nullopt);
    return uploads_->WritePart(id, n, body, {});
  }
  // Every key in the store.
  std::vector<std::string> Keys() {
    std::vector<std::string> keys;
    store_
        ->ListAll({},
                  [&](const storage::ListPage& p) {
                    for (const auto& o : p.objects) keys.push_back(o.key);
                    return Status();
                  })
        .IgnoreError();
    return keys;
  }

  std::unique_ptr<testing::TempDir> dir_;
  std::shared_ptr<storage::Store> store_;
  std::unique_ptr<MultipartUploads> uploads_;
};

TEST_P(MultipartTest, ParallelPartsInAnyOrderWithARetriedPartPublishOnce) {
  std::string data = Bytes(2 * kPart + 12345);
  MultipartPlan plan{"ckpt/model.bin", 3, data.size(), kPart};
  auto up = uploads_->Create(plan);
  ASSERT_TRUE(up.ok()) << up.status().ToString();
  EXPECT_EQ(up->direct, store_->capabilities().part_writes);
  auto part = [&](int n) { return data.substr((n - 1) * kPart, kPart); };
  // Part 1: a first attempt breaks off mid-body, then it is sent again (twice).
  EXPECT_FALSE(Write(up->upload_id, 1, part(1).substr(0, kPart / 2 + 7), /*fail=*/true).ok());
  std::vector<std::thread> threads;
  std::vector<Status> results(4);
  for (int n : {3, 1, 2}) {
    threads.emplace_back([&, n] {
      results[n] = Write(up->upload_id, n, n == 1 ? Bytes(kPart, 9) : part(n)).status();
    });
  }
  for (auto& t : threads) t.join();
  for (int n = 1; n <= 3; ++n) ASSERT_TRUE(results[n].ok()) << results[n].ToString();
  auto one = Write(up->upload_id, 1, part(1));  // replaces the wrong copy
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->etag, Crc32cHex(Crc32cOf(part(1))));

  auto desc = uploads_->Describe(up->upload_id);
  ASSERT_TRUE(desc.ok());
  ASSERT_EQ(desc->parts.size(), 3u);
  EXPECT_EQ(desc->parts[2].size, 12345u);
  EXPECT_EQ(store_->Stat("art/ckpt/model.bin").status().code(), StatusCode::kNotFound);

  auto done = uploads_->Complete("ckpt/model.bin", up->upload_id,
                                 {{1, 0, "\"" + one->etag + "\""}, {2, 0, ""}, {3, 0, ""}});
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  EXPECT_EQ(*store_->ReadAll("art/ckpt/model.bin"), data);
  EXPECT_EQ(Keys(), std::vector<std::string>{"art/ckpt/model.bin"});
  EXPECT_EQ(uploads_->Describe(up->upload_id).status().code(), StatusCode::kNotFound);
}

TEST_P(MultipartTest, StockClientsWithoutSizesAreStaged) {
  auto up = uploads_->Create({"a/b.txt", 2, std::nullopt, std::nullopt});
  ASSERT_TRUE(up.ok());
  EXPECT_FALSE(up->direct);
  ASSERT_TRUE(Write(up->upload_id, 2, "world").ok());
  ASSERT_TRUE(Write(up->upload_id, 1, "hello ").ok());
  ASSERT_TRUE(uploads_->Complete("a/b.txt", up->upload_id, {}).ok());
  EXPECT_EQ(*store_->ReadAll("art/a/b.txt"), "hello world");
  EXPECT_EQ(Keys(), std::vector<std::string>{"art/a/b.txt"});
}

TEST_P(MultipartTest, ResumesAfterARestartWithTheStoredParts) {
  std::string data = Bytes(kPart + 100, 3);
  auto up = uploads_->Create({"r.bin", 2, data.size(), kPart});
  ASSERT_TRUE(up.ok());
  ASSERT_TRUE(Write(up->upload_id, 1, data.substr(0, kPart)).ok());
  uploads_ = std::make_unique<MultipartUploads>(store_, "art");  // a restarted server
  auto desc = uploads_->Describe(up->upload_id);
  ASSERT_TRUE(desc.ok()) << desc.status().ToString();
  ASSERT_EQ(desc->parts.size(), 1u);
  EXPECT_EQ(desc->parts[0].number, 1);
  ASSERT_TRUE(Write(up->upload_id, 2, data.substr(kPart)).ok());
  ASSERT_TRUE(uploads_->Complete("r.bin", up->upload_id, {}).ok());
  EXPECT_EQ(*store_->ReadAll("art/r.bin"), data);
}

// Issue 28: a client's declared size reserved that much disk at once, forever, across restarts.
TEST_P(MultipartTest, SizesAreBoundedAndAbandonedUploadsExpire) {
  EXPECT_EQ(
      uploads_->Create({"huge.bin", 2, kMaxUploadSize + 1, kMaxUploadSize / 2 + 1}).status().code(),
      StatusCode::kInvalidArgument);
  std::string data = Bytes(kPart + 10, 7);
  auto idle = uploads_->Create({"idle.bin", 2, data.size(), kPart});
  ASSERT_TRUE(idle.ok());
  ASSERT_TRUE(Write(idle->upload_id, 1, data.substr(0, kPart)).ok());
  const auto now = std::chrono::system_clock::now();
  // Recent: kept.
  EXPECT_EQ(*uploads_->ExpireIdle(std::chrono::hours(24), now), 0);
  EXPECT_TRUE(uploads_->Describe(idle->upload_id).ok());
  // A day later: aborted, its parts and reserved file gone.
  EXPECT_EQ(*uploads_->ExpireIdle(std::chrono::hours(24), now + std::chrono::hours(25)), 1);
  EXPECT_EQ(uploads_->Describe(idle->upload_id).status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(Keys().empty()) << Keys()[0];
  if (dir_) {
    for (auto& e : std::filesystem::recursive_directory_iterator(dir_->path())) {
      EXPECT_TRUE(e.is_directory()) << e.path();
    }
  }
}

TEST_P(MultipartTest, AbortAndBadCompletesLeaveNothingVisible) {
  std::string data = Bytes(kPart + 10, 4);
  auto up = uploads_->Create({"x.bin", 2, data.size(), kPart});
  ASSERT_TRUE(up.ok());
  ASSERT_TRUE(Write(up->upload_id, 1, data.substr(0, kPart)).ok());
  EXPECT_EQ(uploads_->Complete("x.bin", up->upload_id, {}).status().code(),
            StatusCode::kFailedPrecondition);  // part 2 missing
  ASSERT_TRUE(Write(up->upload_id, 2, data.substr(kPart)).ok());
  EXPECT_EQ(uploads_->Complete("y.bin", up->upload_id, {}).status().code(),
            StatusCode::kInvalidArgument);  // another path
  EXPECT_EQ(uploads_->Complete("x.bin", up->upload_id, {{1, 0, "00"}}).status().code(),
            StatusCode::kInvalidArgument);  // wrong ETag
  if (up->direct) {                         // a part of the wrong length
    EXPECT_EQ(Write(up->upload_id, 2, "short").status().code(), StatusCode::kInvalidArgument);
  }
  EXPECT_EQ(Write(up->upload_id, 3, "x").status().code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(uploads_->Abort("x.bin", up->upload_id).ok());
  EXPECT_TRUE(Keys().empty()) << Keys()[0];
  if (dir_) {  // no temporary file left either
    EXPECT_FALSE(std::filesystem::exists(dir_->path() + "/art/.ferry-mpu"));
    for (auto& e : std::filesystem::recursive_directory_iterator(dir_->path())) {
      EXPECT_TRUE(e.is_directory()) << e.path();
    }
  }
  EXPECT_EQ(uploads_->Describe(up->upload_id).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(uploads_->Describe("../../etc").status().code(), StatusCode::kInvalidArgument);
}

TEST_P(MultipartTest, ReadsOfAnySizeFillTheSubPartsAndALongPartIsRefused) {
  // Direct parts are read straight into sub-part buffers: reads that end anywhere (not on a
  // sub-part boundary) still give the right bytes at the right offsets.
  std::string data = Bytes(kPart + 5000, 7);
  auto up = uploads_->Create({"odd.bin", 2, data.size(), kPart});
  ASSERT_TRUE(up.ok());
  for (auto [n, step] : {std::pair{2, size_t{777}}, std::pair{1, size_t{1000003}}}) {
    PiecewiseBody body(n == 1 ? data.substr(0, kPart) : data.substr(kPart), step, false,
                       std::nullopt);
    auto part = uploads_->WritePart(up->upload_id, n, body, {});
    ASSERT_TRUE(part.ok()) << part.status().ToString();
  }
  // One byte too many, in a full part and in the last: refused, and the part counts as missing
  // (its marker is removed before a new body is read), so the upload cannot complete.
  for (auto [n, len] : {std::pair{1, kPart + 1}, std::pair{2, uint64_t{5001}}}) {
    auto r = Write(up->upload_id, n, Bytes(len, 8));
    if (up->direct) {
      EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << n;
      EXPECT_NE(r.status().message().find("longer than"), std::string::npos)
          << r.status().message();
    }
  }
  if (!up->direct) return;
  EXPECT_EQ(uploads_->Complete("odd.bin", up->upload_id, {}).status().code(),
            StatusCode::kFailedPrecondition);
  ASSERT_TRUE(Write(up->upload_id, 1, data.substr(0, kPart)).ok());
  ASSERT_TRUE(Write(up->upload_id, 2, data.substr(kPart)).ok());
  ASSERT_TRUE(uploads_->Complete("odd.bin", up->upload_id, {}).ok());
  EXPECT_EQ(*store_->ReadAll("art/odd.bin"), data);
}

TEST_P(MultipartTest, LocalDirectoriesTakePartsOfAnyMiBDirectly) {
  // A local directory is written in 1 MiB pieces (pwrite at any offset), so 3 MiB parts go
  // straight into the file; S3 (and the memory store standing in for it) needs 8 MiB pieces
  // and stages them. Either way the bytes come out right, also after a restart.
  constexpr uint64_t kOdd = 3 * kLocalSubPartSize;
  std::string data = Bytes(2 * kOdd + 999, 9);
  auto up = uploads_->Create({"mib.bin", 3, data.size(), kOdd});
  ASSERT_TRUE(up.ok()) << up.status().ToString();
  EXPECT_EQ(up->direct, GetParam() == "local");
  ASSERT_TRUE(Write(up->upload_id, 3, data.substr(2 * kOdd)).ok());
  ASSERT_TRUE(Write(up->upload_id, 1, data.substr(0, kOdd)).ok());
  uploads_ = std::make_unique<MultipartUploads>(store_, "art");  // a restart: state re-read
  ASSERT_TRUE(Write(up->upload_id, 2, data.substr(kOdd, kOdd)).ok());
  ASSERT_TRUE(uploads_->Complete("mib.bin", up->upload_id, {}).ok());
  EXPECT_EQ(*store_->ReadAll("art/mib.bin"), data);
}

TEST_P(MultipartTest, RejectsPlansThatDoNotAddUp) {
  EXPECT_FALSE(uploads_->Create({"a", 0, std::nullopt, std::nullopt}).ok());
  EXPECT_FALSE(uploads_->Create({"a", 3, 100, 50}).ok());
  EXPECT_FALSE(uploads_->Create({"a", 2, 100, std::nullopt}).ok());
  EXPECT_FALSE(uploads_->Create({"../a", 1, std::nullopt, std::nullopt}).ok());
}

INSTANTIATE_TEST_SUITE_P(Stores, MultipartTest, ::testing::Values("memory", "local"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace ferry::tracker::artifacts
