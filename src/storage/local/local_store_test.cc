#include "storage/local/local_store.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "storage/memory/memory_store.h"
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

TEST_F(LocalStoreTest, InProgressWriteHasNoNameUntilCommit) {
  // O_TMPFILE: a process killed before Commit() leaves nothing behind.
  auto w = store_->NewWriter("dir/file.bin", {});
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->Append("abc").ok());
  EXPECT_TRUE(FilesOnDisk().empty());
  ListPage page = *store_->List({.prefix = ""});
  EXPECT_TRUE(page.objects.empty());
  ASSERT_TRUE((*w)->Commit().ok());
  EXPECT_EQ(FilesOnDisk(), std::vector<std::string>{"file.bin"});
  // Create-only writes link the unnamed file straight to its name.
  EXPECT_EQ(store_->WriteAll("dir/file.bin", "x", {.if_none_match = true}).status().code(),
            StatusCode::kAlreadyExists);
  ASSERT_TRUE(store_->WriteAll("dir/new.bin", "y", {.if_none_match = true}).ok());
  EXPECT_EQ(*store_->ReadAll("dir/new.bin"), "y");
  EXPECT_EQ(FilesOnDisk().size(), 2u);
}

TEST_F(LocalStoreTest, AFreshFileIsLinkedToItsNameAndAnExistingOneReplaced) {
  // A fresh file gets its name in one link; an existing one is replaced through a temporary
  // name and rename. Neither leaves a temporary file behind.
  ASSERT_TRUE(store_->WriteAll("d/f.bin", "first", {}).ok());
  EXPECT_EQ(FilesOnDisk(), std::vector<std::string>{"f.bin"});
  ASSERT_TRUE(store_->WriteAll("d/f.bin", "second, longer", {}).ok());
  EXPECT_EQ(*store_->ReadAll("d/f.bin"), "second, longer");
  EXPECT_EQ(FilesOnDisk(), std::vector<std::string>{"f.bin"});
  // A directory in the way of the name: the link fails with the path in the error.
  std::filesystem::create_directories(root_ + "/d/sub.bin");
  auto in_the_way = store_->WriteAll("d/sub.bin", "x", {});
  ASSERT_FALSE(in_the_way.ok());
  EXPECT_NE(in_the_way.status().message().find("d/sub.bin"), std::string::npos)
      << in_the_way.status().ToString();
  EXPECT_EQ(FilesOnDisk(), std::vector<std::string>{"f.bin"});
}

TEST_F(LocalStoreTest, ALocalFileIsPublishedByALinkWithoutACopy) {
  // The proxy's spool file becomes the blob: same inode, both names, the key replaced whole.
  std::string file = TempRoot() + "/spool-" + std::to_string(getpid());
  std::ofstream(file) << "spooled bytes";
  ASSERT_TRUE(store_->WriteAll("blobs/ab/x", "older", {}).ok());
  auto info = store_->LinkLocalFile("blobs/ab/x", file, {.metadata = {{"ferry-digest", "d"}}});
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->size, 13u);
  EXPECT_EQ(*store_->ReadAll("blobs/ab/x"), "spooled bytes");
  EXPECT_EQ(std::filesystem::hard_link_count(file), 2u);
  EXPECT_EQ(FilesOnDisk(), std::vector<std::string>{"x"});           // no temporary name left
  ASSERT_TRUE(store_->LinkLocalFile("blobs/new/y", file, {}).ok());  // parents made
  EXPECT_EQ(*store_->ReadAll("blobs/new/y"), "spooled bytes");
  // Create-only: an existing key stays.
  EXPECT_EQ(store_->LinkLocalFile("blobs/ab/x", file, {.if_none_match = true}).status().code(),
            StatusCode::kAlreadyExists);
  EXPECT_EQ(store_->LinkLocalFile("blobs/z", root_ + "/missing", {}).status().code(),
            StatusCode::kNotFound);
  std::filesystem::remove(file);
  // Another filesystem (tmpfs) cannot be linked: the caller copies instead.
  struct stat shm, here;
  if (::stat("/dev/shm", &shm) == 0 && ::stat(root_.c_str(), &here) == 0 &&
      shm.st_dev != here.st_dev) {
    std::string other = "/dev/shm/ferry-link-" + std::to_string(getpid());
    std::ofstream(other) << "x";
    EXPECT_EQ(store_->LinkLocalFile("blobs/w", other, {}).status().code(),
              StatusCode::kUnimplemented);
    std::filesystem::remove(other);
  }
  EXPECT_EQ(MakeMemoryStore()->LinkLocalFile("k", root_ + "/f", {}).status().code(),
            StatusCode::kUnimplemented);
}

TEST_F(LocalStoreTest, InProgressPartWriteIsAMarkedTempFileHiddenFromListing) {
  auto w = store_->NewPartWriter("dir/big.bin", {.size = 10, .part_size = 5});
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->WritePart(1, "01234").ok());
  auto files = FilesOnDisk();
  ASSERT_EQ(files.size(), 1u);
  EXPECT_TRUE(IsLocalTempName(files[0])) << files[0];
  EXPECT_EQ((*w)->resume_token(), files[0]);
  EXPECT_TRUE(store_->List({.prefix = ""})->objects.empty());
  // A journal that no longer matches discards the file by its token.
  std::string token = (*w)->resume_token();
  w->reset();
  ASSERT_TRUE(store_->AbortPartWrite("dir/big.bin", token).ok());
  EXPECT_TRUE(FilesOnDisk().empty());
  EXPECT_TRUE(store_->AbortPartWrite("dir/big.bin", token).ok());  // already gone: fine
  EXPECT_EQ(store_->AbortPartWrite("dir/big.bin", ".ferry-tmp.user-file").code(),
            StatusCode::kInvalidArgument);
}

TEST_F(LocalStoreTest, OnlyMarkedTempNamesAreHidden) {
  EXPECT_FALSE(IsLocalTempName(".ferry-tmp.x"));
  EXPECT_FALSE(IsLocalTempName(".ferry-tmp.x.0123456789abcdef-00000000"));
  EXPECT_FALSE(IsLocalTempName("model.bin"));
  // A user's own files that merely look like temp files are ordinary objects.
  std::filesystem::create_directories(root_ + "/d");
  std::ofstream(root_ + "/d/.ferry-tmp.notes") << "mine";
  std::ofstream(root_ + "/d/.ferry-tmp.x.0123456789abcdef-00000000") << "mine too";
  auto page = store_->List({.prefix = "d/"});
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->objects.size(), 2u);
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
