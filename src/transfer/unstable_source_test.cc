// The copy engine when a local source changes, vanishes or cannot be read while it is copied:
// never a torn object at the destination; with CopyOptions::leave_out_unstable_sources the object
// is left out (CopyReport::unstable) and the copy succeeds; destination failures still fail.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>

#include "storage/local/local_store.h"
#include "storage/memory/memory_store.h"
#include "storage/store_wrapper.h"
#include "transfer/copy_engine.h"

namespace ferry::transfer {
namespace {

using storage::OpenedUrl;

OpenedUrl At(std::shared_ptr<storage::Store> store, std::string key) {
  storage::ParsedUrl u{.key = key, .trailing_slash = !key.empty() && key.back() == '/'};
  return OpenedUrl{.store = std::move(store), .key = std::move(key), .url = u};
}

// Forwards to a store and, while the `nth` read of `key` is delivering its first chunk, runs
// `mutate` (the job appending to or deleting the file under the reader). Writes can be refused.
class MutatingStore final : public storage::StoreWrapper {
 public:
  MutatingStore(std::shared_ptr<storage::Store> inner, std::string key, int nth,
                std::function<void()> mutate)
      : StoreWrapper(std::move(inner)),
        key_(std::move(key)),
        nth_(nth),
        mutate_(std::move(mutate)) {}
  void RefuseWrites(std::string key) { refused_ = std::move(key); }

  Status Read(std::string_view key, const storage::ReadOptions& options,
              const storage::ByteSink& sink) override {
    if (key != key_ || ++reads_ != nth_) return inner().Read(key, options, sink);
    bool first = true;
    return inner().Read(key, options, [&](std::string_view chunk) {
      if (first) mutate_();
      first = false;
      return sink(chunk);
    });
  }
  // Through Read() above (Store's default), so the copy engine's reads meet the mutation too.
  Result<size_t> ReadInto(std::string_view key, const storage::ReadOptions& options,
                          std::span<char> dst, const storage::ReadProgress& progress) override {
    return Store::ReadInto(key, options, dst, progress);
  }
  Result<std::unique_ptr<storage::Writer>> NewWriter(std::string_view key,
                                                     const storage::WriteOptions& o) override {
    if (key == refused_) return Refused();
    return inner().NewWriter(key, o);
  }
  Result<storage::ObjectInfo> WriteAll(std::string_view key, std::string_view data,
                                       const storage::WriteOptions& o) override {
    if (key == refused_) return Refused();
    return inner().WriteAll(key, data, o);
  }

 private:
  static Status Refused() {
    return Status(StatusCode::kPermissionDenied, "AccessDenied (injected)");
  }
  std::string key_, refused_;
  int nth_;
  std::atomic<int> reads_{0};
  std::function<void()> mutate_;
};

class UnstableSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() /
            ("ferry-unstable-" + std::to_string(getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_ + "/out");
    options_.recursive = true;
    options_.state_dir = root_ + "/state";
    options_.part_size = 5 << 20;
    dst_ = storage::MakeMemoryStore("dst");
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  void Write(const std::string& name, const std::string& data) {
    std::ofstream(root_ + "/out/" + name, std::ios::binary) << data;
  }
  void Append(const std::string& name, const std::string& data) {
    std::ofstream(root_ + "/out/" + name, std::ios::binary | std::ios::app) << data;
  }
  // Copies root/out/ to dst:run/ through a MutatingStore over the local store.
  CopyResult Copy(const std::string& key, int nth, std::function<void()> mutate,
                  std::shared_ptr<storage::Store> dst = nullptr) {
    auto src = std::make_shared<MutatingStore>(storage::MakeLocalStore(root_), "out/" + key, nth,
                                               std::move(mutate));
    ProgressCounters counters;
    return RunCopy(At(src, "out/"), At(dst ? dst : dst_, "run/"), options_, counters);
  }

  std::string root_;
  CopyOptions options_;
  std::shared_ptr<storage::Store> dst_;
};

TEST_F(UnstableSourceTest, FileAppendedDuringTheReadFailsInsteadOfUploadingATornCopy) {
  Write("log.txt", std::string(100000, 'a'));
  Write("model.pt", "weights");
  auto r = Copy("log.txt", 1, [&] { Append("log.txt", "more"); });
  EXPECT_EQ(r.status.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status.message().find("changed while being read"), std::string::npos)
      << r.status.message();
  EXPECT_EQ(r.report.files_failed, 1u);
  EXPECT_TRUE(r.report.unstable.empty());
  EXPECT_EQ(dst_->Stat("run/log.txt").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(*dst_->ReadAll("run/model.pt"), "weights");
}

TEST_F(UnstableSourceTest, FileAppendedDuringTheReadIsLeftOutWhenAsked) {
  options_.leave_out_unstable_sources = true;
  Write("log.txt", std::string(100000, 'a'));
  Write("model.pt", "weights");
  auto r = Copy("log.txt", 1, [&] { Append("log.txt", "more"); });
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  ASSERT_EQ(r.report.unstable.size(), 1u);
  EXPECT_EQ(r.report.unstable[0].key, "out/log.txt");
  EXPECT_EQ(r.report.unstable[0].reason, "changed while being copied");
  EXPECT_EQ(r.report.files_failed, 0u);
  EXPECT_EQ(r.report.files_copied, 1u);
  EXPECT_EQ(dst_->Stat("run/log.txt").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(*dst_->ReadAll("run/model.pt"), "weights");
  // Once it is quiet, the next copy takes it.
  auto again = Copy("log.txt", 99, [] {});
  ASSERT_TRUE(again.status.ok());
  EXPECT_TRUE(again.report.unstable.empty());
  EXPECT_EQ(dst_->ReadAll("run/log.txt")->size(), 100004u);
}

TEST_F(UnstableSourceTest, LargeFileChangedDuringPartsLeavesNoObjectAndIsLeftOut) {
  options_.leave_out_unstable_sources = true;
  Write("big.pt", std::string(33 << 20, 'b'));  // above the whole-object limit: parts
  // Read 1 is the checksum pass, later ones are parts: change it under a part read.
  auto r = Copy("big.pt", 2, [&] { Append("big.pt", "x"); });
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  ASSERT_EQ(r.report.unstable.size(), 1u);
  EXPECT_EQ(r.report.unstable[0].reason, "changed while being copied");
  EXPECT_EQ(dst_->Stat("run/big.pt").status().code(), StatusCode::kNotFound);
}

TEST_F(UnstableSourceTest, FileThatVanishesIsLeftOutAsVanished) {
  options_.leave_out_unstable_sources = true;
  Write("tmp.pt", "partial");
  Write("model.pt", "weights");
  auto r = Copy("tmp.pt", 1, [&] { std::filesystem::remove(root_ + "/out/tmp.pt"); });
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  ASSERT_EQ(r.report.unstable.size(), 1u);
  EXPECT_EQ(r.report.unstable[0].reason, "vanished while being copied");
  EXPECT_EQ(dst_->Stat("run/tmp.pt").status().code(), StatusCode::kNotFound);
}

TEST_F(UnstableSourceTest, DestinationFailureIsStillAFailure) {
  options_.leave_out_unstable_sources = true;
  Write("model.pt", "weights");
  Write("other.pt", "more weights");
  auto refusing = std::make_shared<MutatingStore>(dst_, "", 0, [] {});
  refusing->RefuseWrites("run/model.pt");
  auto r = Copy(
      "model.pt", 99, [] {}, refusing);
  EXPECT_EQ(r.status.code(), StatusCode::kPermissionDenied);
  EXPECT_TRUE(r.report.unstable.empty());
  EXPECT_EQ(r.report.files_failed, 1u);
  EXPECT_EQ(*dst_->ReadAll("run/other.pt"), "more weights");
}

}  // namespace
}  // namespace ferry::transfer
