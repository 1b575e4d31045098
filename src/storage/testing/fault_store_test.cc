// The fault-injecting decorator with no faults injected is the store it wraps: it passes the
// conformance suite over a memory and a local store, optional operations included.
#include "storage/testing/fault_store.h"

#include <unistd.h>

#include <filesystem>

#include "storage/local/local_store.h"
#include "storage/memory/memory_store.h"
#include "storage/testing/store_conformance.h"

namespace ferry::storage::testing {
namespace {

std::string TempRoot() {
  static std::string root = [] {
    auto p = std::filesystem::temp_directory_path() / ("ferry-fault-" + std::to_string(getpid()));
    std::filesystem::create_directories(p);
    return p.string();
  }();
  return root;
}

INSTANTIATE_TEST_SUITE_P(
    FaultDecorator, StoreConformanceTest,
    ::testing::Values(
        StoreUnderTest{"fault_over_memory",
                       [] { return std::make_shared<FaultInjectingStore>(MakeMemoryStore()); }},
        StoreUnderTest{
            "fault_over_local",
            [] { return std::make_shared<FaultInjectingStore>(MakeLocalStore(TempRoot())); }}),
    [](const auto& info) { return info.param.name; });

TEST(FaultInjectingStoreTest, FailsAndCorruptsOnlyReadsAndOnlyWhenAsked) {
  auto mem = MakeMemoryStore();
  FaultInjectingStore faulty(mem);
  ASSERT_TRUE(faulty.WriteAll("k", "abc").ok());
  EXPECT_EQ(*faulty.ReadAll("k"), "abc");
  faulty.CorruptReads(true);
  EXPECT_NE(*faulty.ReadAll("k"), "abc");
  faulty.CorruptReads(false);
  faulty.FailReadsFrom(3);  // the third read from now on
  EXPECT_EQ(faulty.ReadAll("k").status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(faulty.reads(), 3);
  // Server-side copies and stats are not reads through the decorator.
  EXPECT_TRUE(faulty.CopyFrom(faulty, "k", "k2").ok());
  EXPECT_EQ(*mem->ReadAll("k2"), "abc");
  EXPECT_TRUE(faulty.Stat("k2").ok());
}

TEST(FaultInjectingStoreTest, ReadIntoMeetsTheSameFaults) {
  auto local = MakeLocalStore(TempRoot());  // overrides ReadInto: the decorator must not forward
  FaultInjectingStore faulty(local);
  ASSERT_TRUE(faulty.WriteAll("into", "abc").ok());
  std::string dst(3, '\0');
  auto ok = [](size_t) { return Status(); };
  faulty.CorruptReads(true);
  ASSERT_TRUE(faulty.ReadInto("into", {}, std::span<char>(dst), ok).ok());
  EXPECT_NE(dst, "abc");
  faulty.CorruptReads(false);
  faulty.FailReadsFrom(faulty.reads() + 1);
  EXPECT_EQ(faulty.ReadInto("into", {}, std::span<char>(dst), ok).status().code(),
            StatusCode::kUnavailable);
}

}  // namespace
}  // namespace ferry::storage::testing
