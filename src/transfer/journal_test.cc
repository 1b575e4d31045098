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

}  // namespace
}  // namespace ferry::transfer
