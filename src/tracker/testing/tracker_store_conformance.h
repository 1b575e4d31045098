#pragma once
// The TrackerStore conformance suite: every rule of tracker/tracker_store.h (and the sampling
// rule of tracker/metric_sampling.h) as parameterised tests. A backend's test file instantiates
// it with a factory that returns a fresh, empty store for each test (the "tracker_" prefix lets
// `ctest -R tracker` pick the suite):
//
//   INSTANTIATE_TEST_SUITE_P(tracker_memory, TrackerStoreConformanceTest,
//                            ::testing::Values(TrackerStoreUnderTest{"memory", [] {
//                              return MakeMemoryTrackerStore(); }}),
//                            [](const auto& info) { return info.param.name; });

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tracker/tracker_store.h"

namespace ferry::tracker::testing {

struct TrackerStoreUnderTest {
  std::string name;
  std::function<std::shared_ptr<TrackerStore>()> make;
};

inline std::string PrintToString(const TrackerStoreUnderTest& s) { return s.name; }

class TrackerStoreConformanceTest : public ::testing::TestWithParam<TrackerStoreUnderTest> {
 protected:
  void SetUp() override;
  // A new active experiment; fails the test when it cannot be made.
  std::string NewExperiment(const std::string& name, std::vector<Tag> tags = {});
  // A new run in `experiment_id` ("0" by default).
  RunInfo NewRun(const std::string& experiment_id = "0", int64_t start_time = 1000);
  void Log(const std::string& run_id, const std::vector<MetricPoint>& metrics,
           const std::vector<Param>& params = {}, const std::vector<Tag>& tags = {});
  // Every point of one metric, through GetMetricHistory's pages of `page_size`.
  std::vector<MetricPoint> History(const std::string& run_id, const std::string& key,
                                   int page_size = 1000);

  std::shared_ptr<TrackerStore> store_;
};

}  // namespace ferry::tracker::testing
