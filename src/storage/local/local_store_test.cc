#include "storage/local/local_store.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "storage/testing/store_conformance.h"

namespace ferry::storage {
namespace {

std::string TempRoot() {
  static std::string root = [] {
    auto p = std::filesystem::temp_directory_path() / ("ferry-local-" + std::to_string(getpid()));
    std::filesystem::create_directories(p);
    return p.string();
  }();
  return root;
}

}  // namespace

namespace testing {
INSTANTIATE_TEST_SUITE_P(Local, StoreConformanceTest,
                         ::testing::Values(StoreUnderTest{
                             "local", [] { return MakeLocalStore(TempRoot()); }}),
                         [](const auto& info) { return info.param.name; });
}  // namespace testing

namespace {

class LocalStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = TempRoot() + "/unit-" + ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::create_directories(root_);
    store_ = MakeLocalStore(root_);
  }
  std::vector<std::string> FilesOnDisk() {
    std::vector<std::string> out;
    for (auto& e : std::filesystem::recursive_directory_iterator(root_)) {
      if (e.is_regular_file()) out.push_back(e.path().filename().string());
    }
    return out;
  }
  std::string root_;
  std::shared_ptr<Store> store_;
};

TEST_F(LocalStoreTest, InProgressWriteIsATempFileHiddenFromListing) {
  auto w = store_->NewWriter("dir/file.bin", {});
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->Append("abc").ok());
  auto files = FilesOnDisk();
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].rfind(std::string(kLocalTempPrefix), 0), 0u);
  ListPage page = *store_->List({.prefix = ""});
  EXPECT_TRUE(page.objects.empty());
  ASSERT_TRUE((*w)->Commit().ok());
  EXPECT_EQ(FilesOnDisk(), std::vector<std::string>{"file.bin"});
}

TEST_F(LocalStoreTest, RejectsKeysThatAreNotPlainRelativePaths) {
  for (const char* bad : {"a//b", "./a", "a/../b", "a/"}) {
    EXPECT_EQ(store_->WriteAll(bad, "x").status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

TEST_F(LocalStoreTest, StatOfDirectoryIsNotFound) {
  std::filesystem::create_directories(root_ + "/d");
  auto st = store_->Stat("d");
  EXPECT_EQ(st.status().code(), StatusCode::kNotFound);
  EXPECT_NE(st.status().message().find("directory"), std::string::npos);
}

TEST_F(LocalStoreTest, WriteIntoReadOnlyDirectoryFailsClearly) {
  if (geteuid() == 0) GTEST_SKIP() << "root ignores permissions";
  std::filesystem::create_directories(root_ + "/ro");
  std::filesystem::permissions(
      root_ + "/ro", std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
  auto w = store_->NewWriter("ro/x", {});
  EXPECT_EQ(w.status().code(), StatusCode::kPermissionDenied);
}

}  // namespace
}  // namespace ferry::storage
