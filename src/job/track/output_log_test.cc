#include "job/track/output_log.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace ferry::job::track {
namespace {

std::string TempPath() {
  return (std::filesystem::temp_directory_path() /
          ("outlog-" + std::to_string(::getpid()) + ".log"))
      .string();
}

TEST(OutputLogTest, KeepsBothStreamsInArrivalOrder) {
  auto log = OutputLog::Create(TempPath(), 1024);
  ASSERT_TRUE(log.ok());
  (*log)->Write("out 1\n", false);
  (*log)->Write("err 1\n", true);
  (*log)->Write("out 2\n", false);
  EXPECT_EQ(*(*log)->Contents(), "out 1\nerr 1\nout 2\n");
  EXPECT_EQ((*log)->size(), 18u);
}

TEST(OutputLogTest, StopsAtTheLimitWithOneLine) {
  const std::string path = TempPath();
  {
    auto log = OutputLog::Create(path, 10);
    ASSERT_TRUE(log.ok());
    (*log)->Write("0123456", false);
    (*log)->Write("789abcdef", false);
    (*log)->Write("more", false);
    std::string text = *(*log)->Contents();
    EXPECT_EQ(text.substr(0, 10), "0123456789");
    EXPECT_NE(text.find("[ferry: output log truncated at 10 bytes"), std::string::npos);
    EXPECT_EQ(text.find("more"), std::string::npos);
  }
  EXPECT_FALSE(std::filesystem::exists(path));  // removed with the log
}

TEST(OutputLogTest, UnwritablePathIsAnErrorNamingIt) {
  auto log = OutputLog::Create("/nonexistent-dir/x.log", 10);
  ASSERT_FALSE(log.ok());
  EXPECT_NE(log.status().message().find("/nonexistent-dir/x.log"), std::string::npos);
}

}  // namespace
}  // namespace ferry::job::track
