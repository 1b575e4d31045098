// Resume planning of large object copies: which unfinished part write continues, which parts it
// keeps, and what is discarded.
#include "transfer/resume_plan.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <vector>

#include "base/crc32c.h"
#include "storage/local/local_store.h"
#include "storage/memory/memory_store.h"

namespace ferry::transfer {
namespace {

constexpr uint64_t kPart = 10;
constexpr uint64_t kSize = 25;  // parts of 10, 10 and 5 bytes
const std::string kData = "0123456789abcdefghijKLMNO";

std::string PartData(int n) {
  return kData.substr(static_cast<size_t>((n - 1) * kPart), static_cast<size_t>(kPart));
}

class ResumePlanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ferry-resume-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_ + "/dst");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  ResumeRequest Request(storage::Store& dst, std::string src_etag = "v1") {
    return {.dst = &dst,
            .dst_key = "obj",
            .header = {.src_url = "mem://src/obj",
                       .dst_url = dst.UrlFor("obj"),
                       .size = kSize,
                       .src_etag = std::move(src_etag),
                       .part_size = kPart},
            .journal_path = dir_ + "/state/obj.journal",
            .write = {.size = kSize, .part_size = kPart}};
  }
  // Writes parts `written` through a fresh plan's writer and journals `journaled` with their
  // real CRCs (or `bad_crc` for part `bad`), then drops the writer as an interrupted copy does.
  std::string Interrupted(storage::Store& dst, std::vector<int> written, std::vector<int> journaled,
                          int bad = 0) {
    auto plan = PlanResume(Request(dst));
    EXPECT_TRUE(plan.ok()) << plan.status().ToString();
    for (int n : written) EXPECT_TRUE(plan->writer->WritePart(n, PartData(n)).ok());
    for (int n : journaled) {
      uint32_t crc = n == bad ? 0x12345678u : Crc32cOf(PartData(n));
      EXPECT_TRUE(plan->journal->PartDone(n, crc).ok());
    }
    return plan->writer->resume_token();
  }
  std::vector<std::string> DstFiles() const {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(dir_ + "/dst")) {
      out.push_back(e.path().filename().string());
    }
    return out;
  }

  std::string dir_;
};

TEST_F(ResumePlanTest, NoJournalStartsFreshAndJournalsTheNewWrite) {
  auto dst = storage::MakeMemoryStore("dst");
  auto plan = PlanResume(Request(*dst));
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_TRUE(plan->done.empty());
  EXPECT_EQ(plan->resumed_bytes, 0u);
  ASSERT_NE(plan->journal, nullptr);
  auto loaded = Journal::Load(dir_ + "/state/obj.journal", Request(*dst).header);
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(loaded->token, plan->writer->resume_token());
}

// A run killed after its journal's intent but before the journal had the write's token: the
// write the destination began since the intent is discarded; an older unfinished write to the
// same key and another key's write stay.
TEST_F(ResumePlanTest, IntentWithoutATokenDiscardsTheWriteBegunSince) {
  auto dst = storage::MakeLocalStore(dir_ + "/dst");
  const storage::PartWriteOptions write{.size = kSize, .part_size = kPart};
  auto old = dst->NewPartWriter("obj", write);
  auto other = dst->NewPartWriter("other", write);
  ASSERT_TRUE(old.ok() && other.ok());
  std::string old_token = (*old)->resume_token(), other_token = (*other)->resume_token();
  struct timespec hour_ago[2] = {{.tv_sec = ::time(nullptr) - 3600, .tv_nsec = 0},
                                 {.tv_sec = ::time(nullptr) - 3600, .tv_nsec = 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, (dir_ + "/dst/" + old_token).c_str(), hour_ago, 0), 0);
  old->reset();
  other->reset();  // dropped without Abort(): their files stay, as an interrupted copy's do
  JournalHeader intent = Request(*dst).header;
  intent.started = std::chrono::system_clock::now();
  ASSERT_TRUE(Journal::Create(dir_ + "/state/obj.journal", intent).ok());
  auto orphan = dst->NewPartWriter("obj", write);  // ... and the kill came here
  ASSERT_TRUE(orphan.ok());
  std::string orphan_token = (*orphan)->resume_token();
  orphan->reset();

  auto plan = PlanResume(Request(*dst));
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_TRUE(plan->done.empty());
  auto files = DstFiles();
  std::sort(files.begin(), files.end());
  std::vector<std::string> want{old_token, other_token, plan->writer->resume_token()};
  std::sort(want.begin(), want.end());
  EXPECT_EQ(files, want);  // the orphan is gone
  EXPECT_NE(plan->writer->resume_token(), orphan_token);
  auto loaded = Journal::Load(dir_ + "/state/obj.journal", Request(*dst).header);
  ASSERT_TRUE(loaded.has_value() && loaded->started.has_value());
  EXPECT_EQ(loaded->token, plan->writer->resume_token());
}

// A destination that refuses to begin the write made nothing: no intent is left behind.
TEST_F(ResumePlanTest, ARefusedWriteLeavesNoJournal) {
  auto dst = storage::MakeLocalStore(dir_ + "/dst");
  ASSERT_TRUE(dst->WriteAll("file", "x").ok());
  ResumeRequest request = Request(*dst);
  request.dst_key = "file/obj";  // under a file: the directory cannot be made
  auto plan = PlanResume(request);
  ASSERT_FALSE(plan.ok());
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/state/obj.journal"));
}

TEST_F(ResumePlanTest, MatchingJournalResumesOnlyThePartsTheDestinationHas) {
  auto dst = storage::MakeMemoryStore("dst");
  // Parts 1 and 3 reached the destination; the journal also claims part 2 (e.g. a multipart
  // upload whose part expired).
  std::string token = Interrupted(*dst, {1, 3}, {1, 2, 3});
  auto plan = PlanResume(Request(*dst));
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->writer->resume_token(), token);
  EXPECT_EQ(plan->done.size(), 2u);
  EXPECT_TRUE(plan->done.contains(1) && plan->done.contains(3));
  EXPECT_EQ(plan->resumed_bytes, kPart + (kSize - 2 * kPart));
  // Finishing the resumed write gives the whole object.
  ASSERT_TRUE(plan->writer->WritePart(2, PartData(2)).ok());
  ASSERT_TRUE(plan->writer->Commit().ok());
  EXPECT_EQ(*dst->ReadAll("obj"), kData);
}

TEST_F(ResumePlanTest, ChangedSourceDiscardsTheUnfinishedWriteAndStartsFresh) {
  auto dst = storage::MakeLocalStore(dir_ + "/dst");
  std::string old_token = Interrupted(*dst, {1}, {1});
  ASSERT_EQ(DstFiles().size(), 1u);  // the unfinished write's temporary file
  auto plan = PlanResume(Request(*dst, "v2"));
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_NE(plan->writer->resume_token(), old_token);
  EXPECT_TRUE(plan->done.empty());
  // Only the new write's temporary file is left; the old one was discarded.
  EXPECT_EQ(DstFiles(), std::vector<std::string>{plan->writer->resume_token()});
  auto loaded = Journal::Load(dir_ + "/state/obj.journal", Request(*dst, "v2").header);
  ASSERT_TRUE(loaded.has_value() && loaded->matches);
  EXPECT_EQ(loaded->token, plan->writer->resume_token());
}

TEST_F(ResumePlanTest, WriteTheDestinationNoLongerKnowsStartsOver) {
  auto dst = storage::MakeMemoryStore("dst");
  {
    auto first = PlanResume(Request(*dst));
    ASSERT_TRUE(first.ok());
    ASSERT_TRUE(first->writer->WritePart(1, PartData(1)).ok());
    ASSERT_TRUE(first->journal->PartDone(1, Crc32cOf(PartData(1))).ok());
    first->writer->Abort();  // the upload is gone (expired, aborted by a lifecycle rule)
  }
  auto plan = PlanResume(Request(*dst));
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_TRUE(plan->done.empty());
  EXPECT_EQ(plan->resumed_bytes, 0u);
  auto loaded = Journal::Load(dir_ + "/state/obj.journal", Request(*dst).header);
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(loaded->token, plan->writer->resume_token());
  EXPECT_TRUE(loaded->parts.empty());
}

TEST_F(ResumePlanTest, LocalPartsWhoseBytesDoNotMatchTheJournalAreCopiedAgain) {
  auto dst = storage::MakeLocalStore(dir_ + "/dst");
  Interrupted(*dst, {1, 2}, {1, 2}, /*bad=*/2);
  auto plan = PlanResume(Request(*dst));
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->done.size(), 1u);
  EXPECT_TRUE(plan->done.contains(1));
  EXPECT_EQ(plan->resumed_bytes, kPart);
}

TEST_F(ResumePlanTest, JournalLinesForPartsPastTheEndAreIgnored) {
  auto dst = storage::MakeLocalStore(dir_ + "/dst");
  Interrupted(*dst, {1}, {1});
  {
    auto j = Journal::Append(dir_ + "/state/obj.journal");
    ASSERT_TRUE(j.ok());
    ASSERT_TRUE((*j)->PartDone(9, 1).ok());  // a hand-edited or corrupt journal
  }
  auto plan = PlanResume(Request(*dst));
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->done.size(), 1u);
  EXPECT_EQ(plan->resumed_bytes, kPart);
}

}  // namespace
}  // namespace ferry::transfer
