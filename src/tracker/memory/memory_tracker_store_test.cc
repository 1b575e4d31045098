#include "tracker/memory/memory_tracker_store.h"

#include <gtest/gtest.h>

namespace ferry::tracker {
namespace {

TEST(MemoryTrackerStoreTest, LogsAndReadsBackARun) {
  auto store = MakeMemoryTrackerStore();
  auto run = store->CreateRun({.experiment_id = "0", .artifact_root = "mem://a"});
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  ASSERT_TRUE(store->LogBatch(run->run_id, {{"loss", 1.5, 10, 0}}, {{"lr", "0.1"}}, {}).ok());
  auto got = store->GetRun(run->run_id);
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->latest_metrics.size(), 1u);
  EXPECT_EQ(got->latest_metrics[0].value, 1.5);
  EXPECT_EQ(got->params, (std::vector<Param>{{"lr", "0.1"}}));
}

}  // namespace
}  // namespace ferry::tracker
