#pragma once
// Shared by the shard module's tests: a temporary directory per test holding an
// image-folder-like tree of samples, and a registry that opens local paths.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "storage/local/local_store.h"
#include "storage/registry.h"

namespace ferry::shard::testing {

// root_/src/d/<1000+i>.jpg (jpg_base + i * jpg_step bytes of one letter) and .cls (the text of i)
// for each of `samples` samples; root_ is removed after the test.
class SampleTreeTest : public ::testing::Test {
 protected:
  SampleTreeTest(int samples, size_t jpg_base, size_t jpg_step)
      : samples_(samples), jpg_base_(jpg_base), jpg_step_(jpg_step) {}

  void SetUp() override {
    namespace fs = std::filesystem;
    root_ = fs::temp_directory_path() /
            ("ferry-shard-test-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "src" / "d");
    for (int i = 0; i < samples_; ++i) {
      std::string key = "d/" + std::to_string(1000 + i);
      std::ofstream(root_ / "src" / (key + ".jpg"))
          << std::string(jpg_base_ + static_cast<size_t>(i) * jpg_step_, char('a' + i % 26));
      std::ofstream(root_ / "src" / (key + ".cls")) << i;
    }
    registry_.Register(storage::Scheme::kLocal, [](const storage::ParsedUrl&) {
      return Result<std::shared_ptr<storage::Store>>(storage::MakeLocalStore("/"));
    });
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  std::filesystem::path root_;
  storage::StoreRegistry registry_;

 private:
  int samples_;
  size_t jpg_base_, jpg_step_;
};

}  // namespace ferry::shard::testing
