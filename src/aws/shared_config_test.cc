#include "aws/shared_config.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace ferry::aws {
namespace {

TEST(SharedConfigTest, ParsesSectionsAndNestedKeys) {
  auto ini = ParseIni(
      "[default]\nregion = eu-west-1\n# comment\n[profile dev]\ns3 =\n  addressing_style = path\n"
      "  endpoint_url = http://x\nregion=us-west-2\n");
  EXPECT_EQ(ini["default"]["region"], "eu-west-1");
  EXPECT_EQ(ini["profile dev"]["s3.addressing_style"], "path");
  EXPECT_EQ(ini["profile dev"]["s3.endpoint_url"], "http://x");
  EXPECT_EQ(ini["profile dev"]["region"], "us-west-2");
}

TEST(SharedConfigTest, MergesConfigAndCredentialsForProfile) {
  auto dir = std::filesystem::temp_directory_path() / ("ferry-cfg-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "config") << "[profile dev]\nregion = ap-south-1\n";
  std::ofstream(dir / "credentials") << "[dev]\naws_access_key_id = AKIDDEV\n";
  MapEnvironment env({{"AWS_CONFIG_FILE", (dir / "config").string()},
                      {"AWS_SHARED_CREDENTIALS_FILE", (dir / "credentials").string()},
                      {"AWS_PROFILE", "dev"}});
  auto cfg = LoadSharedConfig(env);
  EXPECT_TRUE(cfg.profile_found);
  EXPECT_EQ(cfg.Get("region"), "ap-south-1");
  EXPECT_EQ(cfg.Get("aws_access_key_id"), "AKIDDEV");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ferry::aws
