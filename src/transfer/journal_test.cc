#include "transfer/journal.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace ferry::transfer {
namespace {

TEST(JournalTest, RoundTripsPartsAndRejectsOtherVersions) {
  std::string dir =
      std::filesystem::temp_directory_path() / ("ferry-journal-" + std::to_string(getpid()));
  std::string path = Journal::PathFor(dir, "s3://b/k", "/tmp/k");
  JournalHeader h{.src_url = "s3://b/k",
                  .dst_url = "/tmp/k",
                  .size = 100,
                  .src_etag = "e1",
                  .part_size = 10,
                  .token = "upload-1"};
  {
    auto j = Journal::Create(path, h);
    ASSERT_TRUE(j.ok()) << j.status().ToString();
    ASSERT_TRUE((*j)->PartDone(1, 0xdeadbeef).ok());
    ASSERT_TRUE((*j)->PartDone(3, 7).ok());
  }
  std::ofstream(path, std::ios::app) << "part 4 12";  // a torn last line
  auto loaded = Journal::Load(path, h);
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(loaded->token, "upload-1");
  EXPECT_EQ(loaded->parts.size(), 2u);
  EXPECT_EQ(loaded->parts[1], 0xdeadbeefu);
  JournalHeader changed = h;
  changed.src_etag = "e2";
  auto stale = Journal::Load(path, changed);
  ASSERT_TRUE(stale.has_value());  // names what to discard
  EXPECT_FALSE(stale->matches);
  EXPECT_EQ(stale->token, "upload-1");
  EXPECT_TRUE(stale->parts.empty());
  JournalHeader other = h;
  other.dst_url = "/tmp/other";
  EXPECT_FALSE(Journal::Load(path, other).has_value());
  std::filesystem::remove_all(dir);
}

// The intent comes first (header and start time, no token); the token follows on its own line.
TEST(JournalTest, IntentThenTokenAndTheIntentAlone) {
  std::string dir =
      std::filesystem::temp_directory_path() / ("ferry-journal-intent-" + std::to_string(getpid()));
  std::string path = Journal::PathFor(dir, "s3://b/k", "/tmp/k");
  auto started = SystemTime(std::chrono::milliseconds(1'790'000'000'123));
  JournalHeader h{.src_url = "s3://b/k",
                  .dst_url = "/tmp/k",
                  .size = 100,
                  .src_etag = "e1",
                  .part_size = 10,
                  .started = started};
  auto j = Journal::Create(path, h);
  ASSERT_TRUE(j.ok()) << j.status().ToString();
  auto intent = Journal::Load(path, h);
  ASSERT_TRUE(intent.has_value());
  EXPECT_EQ(intent->token, "");
  EXPECT_EQ(intent->started, started);
  ASSERT_TRUE((*j)->SetToken("2~upload id/%").ok());
  ASSERT_TRUE((*j)->PartDone(2, 9).ok());
  auto loaded = Journal::Load(path, h);
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(loaded->token, "2~upload id/%");
  EXPECT_EQ(loaded->started, started);
  EXPECT_EQ(loaded->parts.size(), 1u);
  JournalHeader changed = h;
  changed.size = 99;
  auto stale = Journal::Load(path, changed);  // another version: the token still names the write
  ASSERT_TRUE(stale.has_value());
  EXPECT_FALSE(stale->matches);
  EXPECT_EQ(stale->token, "2~upload id/%");
  EXPECT_TRUE(stale->parts.empty());
  std::filesystem::remove_all(dir);
}

// Local file names need not be UTF-8 (JSON text must be): such a journal is written, matched
// and its token (a temporary file's name) comes back byte for byte.
TEST(JournalTest, NamesThatAreNotUtf8) {
  std::string dir =
      std::filesystem::temp_directory_path() / ("ferry-journal-bytes-" + std::to_string(getpid()));
  const std::string src = "/data/big\xff.bin", dst = "/out/big\xff\xfe.bin";
  std::string path = Journal::PathFor(dir, src, dst);
  JournalHeader h{
      .src_url = src, .dst_url = dst, .size = 100, .src_etag = "e\xff", .part_size = 10};
  auto j = Journal::Create(path, h);
  ASSERT_TRUE(j.ok()) << j.status().ToString();
  ASSERT_TRUE((*j)->SetToken(".ferry-tmp.big\xff\xfe.bin.0123").ok());
  auto loaded = Journal::Load(path, h);
  ASSERT_TRUE(loaded.has_value());
  EXPECT_TRUE(loaded->matches);
  EXPECT_EQ(loaded->token, ".ferry-tmp.big\xff\xfe.bin.0123");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ferry::transfer
