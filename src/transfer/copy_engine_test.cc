// The copy engine against in-memory and local stores, with injected faults.
#include "transfer/copy_engine.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "base/crc32c.h"
#include "base/hash.h"
#include "base/mutex.h"
#include "storage/local/local_store.h"
#include "storage/memory/memory_store.h"
#include "storage/store_wrapper.h"
#include "storage/testing/fault_store.h"

namespace ferry::transfer {
namespace {

using storage::OpenedUrl;

std::string Bytes(size_t n, uint32_t seed) {
  std::string s(n, '\0');
  std::mt19937 rng(seed);
  for (auto& c : s) c = static_cast<char>(rng());
  return s;
}

// The engine works from the store's capabilities; the URL only says whether a '/' ended it.
OpenedUrl At(std::shared_ptr<storage::Store> store, std::string key) {
  storage::ParsedUrl u{.key = key, .trailing_slash = !key.empty() && key.back() == '/'};
  return OpenedUrl{.store = std::move(store), .key = std::move(key), .url = u};
}

class CopyEngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    state_ = std::filesystem::temp_directory_path() /
             ("ferry-engine-" + std::to_string(getpid()) + "-" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(state_);
    options_.state_dir = state_ + "/state";
    options_.part_size = 5 << 20;
  }
  void TearDown() override { std::filesystem::remove_all(state_); }
  CopyResult Copy(const OpenedUrl& src, const OpenedUrl& dst) {
    ProgressCounters counters;
    return RunCopy(src, dst, options_, counters);
  }
  std::string state_;
  CopyOptions options_;
};

TEST_F(CopyEngineTest, CopiesTreeAndSkipsUnchangedOnRerun) {
  auto src = storage::MakeMemoryStore("src");
  auto dst = storage::MakeMemoryStore("dst");
  std::map<std::string, std::string> files = {{"data/a.bin", Bytes(1000, 1)},
                                              {"data/sub/b.bin", Bytes(17 << 20, 2)},  // parts
                                              {"data/c.tmp", "skip me"},
                                              {"data/empty", ""}};
  for (const auto& [k, v] : files) ASSERT_TRUE(src->WriteAll(k, v).ok());
  options_.recursive = true;
  options_.exclude = {"*.tmp"};
  auto r = Copy(At(src, "data"), At(dst, "out/"));
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.report.files_copied, 3u);
  EXPECT_EQ(*dst->ReadAll("out/a.bin"), files["data/a.bin"]);
  EXPECT_TRUE(*dst->ReadAll("out/sub/b.bin") == files["data/sub/b.bin"]);
  EXPECT_EQ(*dst->ReadAll("out/empty"), "");
  EXPECT_EQ(dst->Stat("out/c.tmp").status().code(), StatusCode::kNotFound);
  auto meta = dst->Stat("out/a.bin")->metadata;
  EXPECT_EQ(meta[kCrcMetadataKey], Crc32cHex(Crc32cOf(files["data/a.bin"])));

  auto again = Copy(At(src, "data"), At(dst, "out/"));
  ASSERT_TRUE(again.status.ok());
  EXPECT_EQ(again.report.files_skipped, 3u);
  EXPECT_EQ(again.report.files_copied, 0u);

  ASSERT_TRUE(src->WriteAll("data/a.bin", "changed").ok());
  auto third = Copy(At(src, "data"), At(dst, "out/"));
  EXPECT_EQ(third.report.files_copied, 1u);
  EXPECT_EQ(*dst->ReadAll("out/a.bin"), "changed");
}

TEST_F(CopyEngineTest, NeverDeletesAtDestination) {
  auto src = storage::MakeMemoryStore("src");
  auto dst = storage::MakeMemoryStore("dst");
  ASSERT_TRUE(src->WriteAll("d/x", "1").ok());
  ASSERT_TRUE(dst->WriteAll("o/only-here", "keep").ok());
  options_.recursive = true;
  ASSERT_TRUE(Copy(At(src, "d/"), At(dst, "o/")).status.ok());
  EXPECT_EQ(*dst->ReadAll("o/only-here"), "keep");
}

TEST_F(CopyEngineTest, SingleObjectIntoDirectoryTarget) {
  auto src = storage::MakeMemoryStore("src");
  auto dst = storage::MakeMemoryStore("dst");
  ASSERT_TRUE(src->WriteAll("models/ckpt.pt", "weights").ok());
  auto one = Copy(At(src, "models/ckpt.pt"), At(dst, "backup/"));
  ASSERT_TRUE(one.status.ok());
  EXPECT_EQ(*dst->ReadAll("backup/ckpt.pt"), "weights");
  // The one object is the whole plan: the report (cp --json) and the progress line count it.
  EXPECT_EQ(one.report.files_total, 1u);
  EXPECT_EQ(one.report.bytes_total, 7u);
  auto dir = Copy(At(src, "models"), At(dst, "x"));
  EXPECT_EQ(dir.status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(dir.status.message().find("use -r"), std::string::npos);
}

TEST_F(CopyEngineTest, SingleObjectIntoAnExistingLocalDirectoryWithoutATrailingSlash) {
  // The store, not the URL's scheme, says that "dir" is a directory.
  std::string root = state_ + "/local";
  std::filesystem::create_directories(root + "/dir");
  auto local = storage::MakeLocalStore(root);
  auto src = storage::MakeMemoryStore("src");
  ASSERT_TRUE(src->WriteAll("models/ckpt.pt", "weights").ok());
  auto r = Copy(At(src, "models/ckpt.pt"), At(local, "dir"));
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(*local->ReadAll("dir/ckpt.pt"), "weights");
  // A memory store has no directories: "dir" is the destination object itself.
  auto mem = storage::MakeMemoryStore("dst");
  ASSERT_TRUE(mem->WriteAll("dir/other", "x").ok());
  ASSERT_TRUE(Copy(At(src, "models/ckpt.pt"), At(mem, "dir")).status.ok());
  EXPECT_EQ(*mem->ReadAll("dir"), "weights");
}

TEST_F(CopyEngineTest, DirectoryMarkersAreLeftOutWhereKeysMustBePaths) {
  auto src = storage::MakeMemoryStore("src");
  ASSERT_TRUE(src->WriteAll("d/sub/", "").ok());  // a zero-byte "directory marker"
  ASSERT_TRUE(src->WriteAll("d/sub/a", "a").ok());
  options_.recursive = true;
  std::string root = state_ + "/local";
  std::filesystem::create_directories(root);
  auto local = storage::MakeLocalStore(root);
  auto r = Copy(At(src, "d/"), At(local, "out/"));
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(*local->ReadAll("out/sub/a"), "a");
  auto mem = storage::MakeMemoryStore("dst");
  ASSERT_TRUE(Copy(At(src, "d/"), At(mem, "out/")).status.ok());
  EXPECT_EQ(*mem->ReadAll("out/sub/"), "");  // object stores keep the marker
}

TEST_F(CopyEngineTest, InterruptedLargeCopyResumesKeepingFinishedParts) {
  auto mem = storage::MakeMemoryStore("src");
  auto faulty = std::make_shared<storage::testing::FaultInjectingStore>(mem);
  std::string root = state_ + "/local";
  std::filesystem::create_directories(root);
  auto local = storage::MakeLocalStore(root);
  std::string data = Bytes(41 << 20, 3);  // 9 parts of 5 MiB
  ASSERT_TRUE(mem->WriteAll("big.bin", data).ok());
  options_.part_concurrency = 1;  // deterministic: parts in order
  faulty->FailReadsFrom(4);       // parts 1-3 succeed, then the "network" goes away
  auto first = Copy(At(faulty, "big.bin"), At(local, "big.bin"));
  EXPECT_EQ(first.status.code(), StatusCode::kUnavailable);
  EXPECT_FALSE(std::filesystem::exists(root + "/big.bin"));  // nothing half-written visible

  faulty->FailReadsFrom(0);
  auto second = Copy(At(faulty, "big.bin"), At(local, "big.bin"));
  ASSERT_TRUE(second.status.ok()) << second.status.ToString();
  EXPECT_EQ(second.report.bytes_resumed, 15u << 20);
  EXPECT_TRUE(*local->ReadAll("big.bin") == data);
  // The journal is gone once the copy completed.
  EXPECT_TRUE(std::filesystem::is_empty(options_.state_dir + "/transfers"));
}

// A large local file is read once: its parts' CRCs, combined, give the full CRC32C, which the
// destination records when it commits (S3: CopyObject onto itself after completion).
TEST_F(CopyEngineTest, LargeLocalFileIsReadOnceAndItsChecksumRecordedAtCommit) {
  std::string root = state_ + "/local";
  std::filesystem::create_directories(root);
  std::string data = Bytes(41 << 20, 7);  // 9 parts of 5 MiB
  std::ofstream(root + "/big.bin", std::ios::binary) << data;
  auto faulty =
      std::make_shared<storage::testing::FaultInjectingStore>(storage::MakeLocalStore(root));
  auto dst = storage::MakeMemoryStore("dst");
  auto r = Copy(At(faulty, "big.bin"), At(dst, "big.bin"));
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(faulty->reads(), 9);  // one read per part, no checksum pass before
  EXPECT_EQ(r.report.verified, 1u);
  auto info = dst->Stat("big.bin");
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->metadata[kCrcMetadataKey], Crc32cHex(Crc32cOf(data)));
  EXPECT_TRUE(*dst->ReadAll("big.bin") == data);
}

// Flips the byte at `offset` of the file (and of `data`, its expected content) in place, keeping
// its size and modification time: the same version tag, different bytes.
void ChangeInPlaceKeepingMtime(const std::string& path, std::string& data, size_t offset) {
  struct stat before {};
  ASSERT_EQ(::stat(path.c_str(), &before), 0);
  data[offset] ^= 0x01;
  {
    std::fstream f(path, std::ios::binary | std::ios::in | std::ios::out);
    f.seekp(static_cast<std::streamoff>(offset));
    f.put(data[offset]);
  }
  const struct timespec times[2] = {before.st_atim, before.st_mtim};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
}

// A destination whose parts go with their SHA-256 (as S3's do): a part writer that asks for the
// digests, checks each against its part and counts the parts that came with one.
class Sha256PartsStore final : public storage::StoreWrapper {
 public:
  using StoreWrapper::StoreWrapper;
  Result<std::unique_ptr<storage::PartWriter>> NewPartWriter(
      std::string_view key, const storage::PartWriteOptions& options) override {
    FERRY_ASSIGN_OR_RETURN(auto inner, StoreWrapper::NewPartWriter(key, options));
    return std::unique_ptr<storage::PartWriter>(new Writer(std::move(inner), this));
  }
  int hashed_parts() const { return hashed_parts_.load(); }
  int wrong_digests() const { return wrong_digests_.load(); }

 private:
  class Writer final : public storage::PartWriter {
   public:
    Writer(std::unique_ptr<storage::PartWriter> inner, Sha256PartsStore* store)
        : inner_(std::move(inner)), store_(store) {}
    bool wants_sha256() const override { return true; }
    Status WritePartWithSha256(int number, std::string_view data,
                               const Sha256Digest& sha256) override {
      ++store_->hashed_parts_;
      if (sha256 != Sha256(data)) ++store_->wrong_digests_;
      return inner_->WritePart(number, data);
    }
    Status WritePart(int number, std::string_view data) override {
      return inner_->WritePart(number, data);
    }
    Result<std::map<int, std::string>> StoredParts() override { return inner_->StoredParts(); }
    Result<storage::ObjectInfo> Commit() override { return inner_->Commit(); }
    Result<storage::ObjectInfo> CommitWithMetadata(
        const std::map<std::string, std::string>& metadata) override {
      return inner_->CommitWithMetadata(metadata);
    }
    void Abort() override { inner_->Abort(); }
    std::string resume_token() const override { return inner_->resume_token(); }

   private:
    std::unique_ptr<storage::PartWriter> inner_;
    Sha256PartsStore* store_;
  };
  std::atomic<int> hashed_parts_{0}, wrong_digests_{0};
};

// To such a store a local file's parts are read in order by one thread and hashed four at a
// time (SendHashedParts): every part arrives with its right digest, the file is read once.
TEST_F(CopyEngineTest, LocalFilePartsGoWithTheirSha256ComputedFourAtATime) {
  std::string root = state_ + "/local";
  std::filesystem::create_directories(root);
  std::string data = Bytes((41 << 20) + 12345, 9);  // 9 parts of 5 MiB, the last shorter
  std::ofstream(root + "/big.bin", std::ios::binary) << data;
  auto faulty =
      std::make_shared<storage::testing::FaultInjectingStore>(storage::MakeLocalStore(root));
  auto dst = std::make_shared<Sha256PartsStore>(storage::MakeMemoryStore("dst"));
  auto r = Copy(At(faulty, "big.bin"), At(dst, "big.bin"));
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(faulty->reads(), 9);
  EXPECT_EQ(dst->hashed_parts(), 9);
  EXPECT_EQ(dst->wrong_digests(), 0);
  EXPECT_TRUE(*dst->ReadAll("big.bin") == data);
  EXPECT_EQ(dst->Stat("big.bin")->metadata[kCrcMetadataKey], Crc32cHex(Crc32cOf(data)));
}

// A read failing inside a group: the groups before it are stored, nothing is committed, and the
// next run resumes from them, sending again a stored part that changed in place.
TEST_F(CopyEngineTest, HashedPartsResumeAfterAFailedReadAndResendAChangedPart) {
  std::string root = state_ + "/local";
  std::filesystem::create_directories(root);
  std::string path = root + "/big.bin";
  std::string data = Bytes(41 << 20, 10);
  std::ofstream(path, std::ios::binary) << data;
  auto faulty =
      std::make_shared<storage::testing::FaultInjectingStore>(storage::MakeLocalStore(root));
  auto dst = std::make_shared<Sha256PartsStore>(storage::MakeMemoryStore("dst"));
  options_.part_concurrency = 1;
  faulty->FailReadsFrom(6);  // parts 1-4 (the first group) are stored, part 6's read fails
  EXPECT_FALSE(Copy(At(faulty, "big.bin"), At(dst, "big.bin")).status.ok());
  EXPECT_EQ(dst->Stat("big.bin").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(dst->hashed_parts(), 4);

  ASSERT_NO_FATAL_FAILURE(ChangeInPlaceKeepingMtime(path, data, (5 << 20) + 10));  // part 2

  faulty->FailReadsFrom(0);
  auto r = Copy(At(faulty, "big.bin"), At(dst, "big.bin"));
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.report.bytes_resumed, 15u << 20);  // parts 1, 3 and 4
  EXPECT_EQ(dst->hashed_parts(), 4 + 6);         // then part 2 and parts 5-9
  EXPECT_EQ(dst->wrong_digests(), 0);
  EXPECT_TRUE(*dst->ReadAll("big.bin") == data);
  EXPECT_EQ(dst->Stat("big.bin")->metadata[kCrcMetadataKey], Crc32cHex(Crc32cOf(data)));
}

// Resuming a one-read upload reads the parts an earlier run stored again: a part rewritten in
// place since (same size, same modification time, so the same version tag) is sent again, and
// the recorded checksum describes this run's bytes.
TEST_F(CopyEngineTest, ResumedOneReadUploadChecksItsStoredPartsAgainstTheFile) {
  std::string root = state_ + "/local";
  std::filesystem::create_directories(root);
  std::string path = root + "/big.bin";
  std::string data = Bytes(41 << 20, 8);
  std::ofstream(path, std::ios::binary) << data;
  auto faulty =
      std::make_shared<storage::testing::FaultInjectingStore>(storage::MakeLocalStore(root));
  auto dst = storage::MakeMemoryStore("dst");
  options_.part_concurrency = 1;  // deterministic: parts in order
  faulty->FailReadsFrom(4);       // parts 1-3 are stored, then the read fails
  EXPECT_FALSE(Copy(At(faulty, "big.bin"), At(dst, "big.bin")).status.ok());
  EXPECT_EQ(dst->Stat("big.bin").status().code(), StatusCode::kNotFound);

  ASSERT_NO_FATAL_FAILURE(ChangeInPlaceKeepingMtime(path, data, (5 << 20) + 10));  // part 2

  faulty->FailReadsFrom(0);
  auto r = Copy(At(faulty, "big.bin"), At(dst, "big.bin"));
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.report.bytes_resumed, 10u << 20);  // parts 1 and 3
  EXPECT_TRUE(*dst->ReadAll("big.bin") == data);
  EXPECT_EQ(dst->Stat("big.bin")->metadata[kCrcMetadataKey], Crc32cHex(Crc32cOf(data)));
}

// Files copied to a local disk have their directories fsynced once per copy, in batches of 256
// directories while the copy runs and the rest at the end: every file arrives, in every directory.
TEST_F(CopyEngineTest, ManyLocalDirectoriesAreSyncedInBatchesAndEveryFileArrives) {
  auto src = storage::MakeMemoryStore("src");
  for (int i = 0; i < 300; ++i) {
    ASSERT_TRUE(src->WriteAll("t/d" + std::to_string(i) + "/f.txt", std::to_string(i)).ok());
  }
  std::string root = state_ + "/local";
  std::filesystem::create_directories(root);
  options_.recursive = true;
  auto r = Copy(At(src, "t/"), At(storage::MakeLocalStore(root), "out/"));
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.report.files_copied, 300u);
  for (int i = 0; i < 300; i += 37) {
    std::ifstream f(root + "/out/d" + std::to_string(i) + "/f.txt");
    std::string got((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    EXPECT_EQ(got, std::to_string(i));
  }
}

TEST_F(CopyEngineTest, CorruptedDataFailsLoudlyAndLeavesNothing) {
  auto mem = storage::MakeMemoryStore("src");
  auto faulty = std::make_shared<storage::testing::FaultInjectingStore>(mem);
  auto dst = storage::MakeMemoryStore("dst");
  std::string data = Bytes(40 << 20, 4);
  // Written by ferry (carries a checksum), then corrupted in transit on every read.
  ASSERT_TRUE(
      mem->WriteAll("o.bin", data, {.metadata = {{kCrcMetadataKey, Crc32cHex(Crc32cOf(data))}}})
          .ok());
  ASSERT_TRUE(mem->WriteAll("small.bin", "abc",
                            {.metadata = {{kCrcMetadataKey, Crc32cHex(Crc32cOf("abc"))}}})
                  .ok());
  faulty->CorruptReads(true);
  auto r = Copy(At(faulty, "o.bin"), At(dst, "o.bin"));
  EXPECT_EQ(r.status.code(), StatusCode::kDataLoss);
  EXPECT_NE(r.status.message().find("checksum mismatch"), std::string::npos);
  EXPECT_EQ(dst->Stat("o.bin").status().code(), StatusCode::kNotFound);
  auto s = Copy(At(faulty, "small.bin"), At(dst, "small.bin"));
  EXPECT_EQ(s.status.code(), StatusCode::kDataLoss);
  EXPECT_EQ(dst->Stat("small.bin").status().code(), StatusCode::kNotFound);
}

TEST_F(CopyEngineTest, ChangedSourceDiscardsTheUnfinishedCopysTempFile) {
  auto mem = storage::MakeMemoryStore("src");
  auto faulty = std::make_shared<storage::testing::FaultInjectingStore>(mem);
  std::string root = state_ + "/local";
  std::filesystem::create_directories(root);
  auto local = storage::MakeLocalStore(root);
  ASSERT_TRUE(mem->WriteAll("big.bin", Bytes(41 << 20, 5)).ok());
  options_.part_concurrency = 1;
  faulty->FailReadsFrom(3);
  EXPECT_FALSE(Copy(At(faulty, "big.bin"), At(local, "big.bin")).status.ok());
  auto names = [&] {
    std::vector<std::string> out;
    for (auto& e : std::filesystem::directory_iterator(root)) {
      out.push_back(e.path().filename().string());
    }
    return out;
  };
  ASSERT_EQ(names().size(), 1u);  // the unfinished copy's temporary file, kept for a resume
  faulty->FailReadsFrom(0);
  std::string v2 = Bytes(45 << 20, 6);  // the source changed: the journal no longer matches
  ASSERT_TRUE(mem->WriteAll("big.bin", v2).ok());
  auto r = Copy(At(faulty, "big.bin"), At(local, "big.bin"));
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.report.bytes_resumed, 0u);
  EXPECT_EQ(names(), std::vector<std::string>{"big.bin"});  // the old temp file is gone
  EXPECT_TRUE(*local->ReadAll("big.bin") == v2);
}

TEST_F(CopyEngineTest, LocalTreeLinksOutOfTheTreeNeverReachTheDestination) {
  std::string root = state_ + "/local";
  std::filesystem::create_directories(root + "/out/sub");
  std::filesystem::create_directories(root + "/private");
  std::ofstream(root + "/out/model.pt") << "weights";
  std::ofstream(root + "/private/shadow") << "secret";
  std::filesystem::create_symlink(root + "/private", root + "/out/etc");
  std::filesystem::create_symlink(root + "/private/shadow", root + "/out/sub/pw");
  std::filesystem::create_symlink(".", root + "/out/l1");
  std::filesystem::create_symlink(".", root + "/out/l2");
  auto local = storage::MakeLocalStore("/");
  auto dst = storage::MakeMemoryStore("dst");
  options_.recursive = true;
  auto r = Copy(At(local, (root + "/out/").substr(1)), At(dst, "up/"));
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.report.files_copied, 1u);
  EXPECT_EQ(r.report.left_out_count, 4u);
  ASSERT_EQ(r.report.left_out.size(), 4u);
  EXPECT_EQ(r.report.left_out[0].kind, storage::SkipKind::kLinkOutsideTree);
  auto page = dst->List({.prefix = ""});
  ASSERT_EQ(page->objects.size(), 1u);
  EXPECT_EQ(page->objects[0].key, "up/model.pt");
  // -L follows the links out of the tree; the loops still end.
  options_.follow_symlinks = true;
  auto f = Copy(At(local, (root + "/out/").substr(1)), At(dst, "follow/"));
  ASSERT_TRUE(f.status.ok()) << f.status.ToString();
  EXPECT_EQ(f.report.files_copied, 3u);
  EXPECT_EQ(f.report.left_out_count, 2u);
  EXPECT_EQ(*dst->ReadAll("follow/etc/shadow"), "secret");
}

TEST_F(CopyEngineTest, LocalToLocalRerunSkipsUnchangedFiles) {
  // A NAS path staged into local scratch again (ferry run --in /nas/x=/scratch/x): nothing moves.
  std::string root = state_ + "/l";
  std::filesystem::create_directories(root + "/nas/d");
  for (int i = 0; i < 20; ++i) std::ofstream(root + "/nas/d/f" + std::to_string(i)) << i;
  auto local = storage::MakeLocalStore("/");
  options_.recursive = true;
  auto src = At(local, (root + "/nas/").substr(1));
  auto dst = At(local, (root + "/scratch/").substr(1));
  auto first = Copy(src, dst);
  ASSERT_TRUE(first.status.ok()) << first.status.ToString();
  EXPECT_EQ(first.report.files_copied, 20u);
  auto again = Copy(src, dst);
  ASSERT_TRUE(again.status.ok());
  EXPECT_EQ(again.report.files_skipped, 20u);
  EXPECT_EQ(again.report.files_copied, 0u);
  // Files written by another tool (no checksum xattr) are compared by reading both sides.
  std::filesystem::remove(root + "/scratch/d/f3");
  std::ofstream(root + "/scratch/d/f3") << 3;
  std::ofstream(root + "/scratch/d/f4", std::ios::trunc) << 9;  // same size, other bytes
  auto third = Copy(src, dst);
  EXPECT_EQ(third.report.files_skipped, 19u);
  EXPECT_EQ(third.report.files_copied, 1u);
  std::ifstream f4(root + "/scratch/d/f4");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(f4), {}), "4");
}

TEST_F(CopyEngineTest, DestinationInsideTheSourceIsRefused) {
  auto mem = storage::MakeMemoryStore("m");
  ASSERT_TRUE(mem->WriteAll("a/x", "1").ok());
  options_.recursive = true;
  auto r = Copy(At(mem, "a/"), At(mem, "a/backup/"));
  EXPECT_EQ(r.status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status.message().find("inside the source"), std::string::npos);
  EXPECT_EQ(mem->Stat("a/backup/x").status().code(), StatusCode::kNotFound);
  ASSERT_TRUE(Copy(At(mem, "a/"), At(mem, "b/")).status.ok());
}

TEST_F(CopyEngineTest, ManyObjectsStreamThroughABoundedQueueAndStopWhenCancelled) {
  auto src = storage::MakeMemoryStore("src");
  auto dst = storage::MakeMemoryStore("dst");
  for (int i = 0; i < 3000; ++i) ASSERT_TRUE(src->WriteAll("d/" + std::to_string(i), "x").ok());
  ASSERT_TRUE(dst->WriteAll("o/1500", "x").ok());
  options_.recursive = true;
  options_.transfers = 4;
  auto r = Copy(At(src, "d/"), At(dst, "o/"));
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.report.files_total, 3000u);
  EXPECT_EQ(r.report.files_copied + r.report.files_skipped, 3000u);
  EXPECT_GE(r.report.files_skipped, 1u);  // o/1500 was found by the streaming join
  std::atomic<bool> cancel{true};
  options_.cancel = &cancel;
  auto c = Copy(At(src, "d/"), At(dst, "p/"));
  EXPECT_EQ(c.status.code(), StatusCode::kCancelled);
  EXPECT_EQ(dst->List({.prefix = "p/"})->objects.size(), 0u);
}

TEST_F(CopyEngineTest, PartSizeRespectsTheTenThousandPartLimit) {
  EXPECT_EQ(ChoosePartSize(1 << 20, 0), 8u << 20);
  EXPECT_EQ(ChoosePartSize(1 << 20, 1 << 20), 5u << 20);
  uint64_t huge = 200ull << 30;  // 200 GiB
  uint64_t p = ChoosePartSize(huge, 0);
  EXPECT_LE((huge + p - 1) / p, 10000u);
  EXPECT_EQ(p % (1 << 20), 0u);
}

}  // namespace
}  // namespace ferry::transfer
