#include "storage/memory/memory_store.h"

#include "storage/testing/store_conformance.h"

namespace ferry::storage::testing {

INSTANTIATE_TEST_SUITE_P(Memory, StoreConformanceTest,
                         ::testing::Values(StoreUnderTest{"memory",
                                                          [] { return MakeMemoryStore(); }}),
                         [](const auto& info) { return info.param.name; });

}  // namespace ferry::storage::testing
