#include "job/sync.h"

#include <gtest/gtest.h>

namespace ferry::job {
namespace {

TEST(LatestPointer, LivesAboveTheFirstTemplateField) {
  EXPECT_EQ(*LatestPointerKey("s3://b/runs/{job}/{attempt}/", "0"), "runs/_ferry/latest.json");
  EXPECT_EQ(*LatestPointerKey("s3://b/runs/exp-{job}/", "0"), "runs/_ferry/latest.json");
  EXPECT_EQ(*LatestPointerKey("s3://b/{job}/", "2"), "_ferry/latest-rank2.json");
  EXPECT_EQ(*LatestPointerKey("s3://b/fixed/out", "0"), "fixed/out/_ferry/latest.json");
  EXPECT_EQ(*LatestPointerKey("/data/runs/{job}/", "0"), "data/runs/_ferry/latest.json");
}

}  // namespace
}  // namespace ferry::job
