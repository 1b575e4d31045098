#include "tracker/memory/memory_tracker_store.h"

#include "tracker/testing/tracker_store_conformance.h"

namespace ferry::tracker::testing {

INSTANTIATE_TEST_SUITE_P(tracker_memory, TrackerStoreConformanceTest,
                         ::testing::Values(TrackerStoreUnderTest{
                             "memory", [] { return MakeMemoryTrackerStore(); }}),
                         [](const auto& info) { return info.param.name; });

}  // namespace ferry::tracker::testing
