#pragma once
// The Store conformance suite: the behaviour every backend promises (see store.h), as
// parameterised tests. A backend's test file instantiates it:
//
//   INSTANTIATE_TEST_SUITE_P(Memory, StoreConformanceTest,
//                            ::testing::Values(StoreUnderTest{"memory", [] { ... }}));
//
// Each test works under a fresh key prefix, so a shared bucket can host many runs.

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>

#include "storage/store.h"

namespace ferry::storage::testing {

struct StoreUnderTest {
  std::string name;
  std::function<std::shared_ptr<Store>()> make;
  // Bytes for the "large object" test; big enough to cross the backend's multipart threshold.
  uint64_t large_object_size = 12ull << 20;
};

inline std::string PrintToString(const StoreUnderTest& s) { return s.name; }

class StoreConformanceTest : public ::testing::TestWithParam<StoreUnderTest> {
 protected:
  void SetUp() override;
  // A key under this test's private prefix.
  std::string K(std::string_view suffix) const { return prefix_ + std::string(suffix); }
  void Put(const std::string& key, std::string_view data, const WriteOptions& options = {});

  std::shared_ptr<Store> store_;
  std::string prefix_;
};

}  // namespace ferry::storage::testing
