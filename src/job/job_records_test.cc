#include "job/job_records.h"

#include <gtest/gtest.h>

#include <thread>

#include "storage/memory/memory_store.h"

namespace ferry::job {
namespace {

RunIdentity Job(std::string job) { return {.job = std::move(job), .attempt = "", .rank = "0"}; }

TEST(JobRecords, LiveWithTheJobAndAreNeverSharedBetweenJobs) {
  EXPECT_EQ(*JobRecordsKey("s3://b/runs/{job}/{attempt}/", Job("j1")), "runs/j1/_ferry/");
  EXPECT_EQ(*JobRecordsKey("s3://b/runs/{job}/{attempt}/{rank}/", Job("j1")), "runs/j1/_ferry/");
  EXPECT_EQ(*JobRecordsKey("s3://b/runs/{job}-{attempt}/", Job("j1")), "runs/_ferry/jobs/j1/");
  EXPECT_EQ(*JobRecordsKey("s3://b/runs/{job}/", Job("j1")), "runs/j1/_ferry/");
  EXPECT_EQ(*JobRecordsKey("s3://b/fixed/out", Job("j1")), "fixed/out/_ferry/jobs/j1/");
  EXPECT_EQ(*JobRecordsKey("s3://b/{attempt}/", Job("j1")), "_ferry/jobs/j1/");
  EXPECT_EQ(*JobRecordsKey("/data/runs/{date}/{job}/", Job("a/b")), "data/runs/_ferry/jobs/a_b/");
  EXPECT_EQ(*JobRecordsKey("s3://b/runs/{job}/", Job("j2")), "runs/j2/_ferry/");
  EXPECT_FALSE(JobRecordsKey("s3://b/runs/{job", Job("j1")).ok());
}

TEST(JobRecords, PointerAndManifestNames) {
  EXPECT_EQ(LatestPointerName("0", 0), "latest.json");
  EXPECT_EQ(LatestPointerName("3", 0), "latest-rank3.json");
  EXPECT_EQ(LatestPointerName("0", 1), "latest-out1.json");
  EXPECT_EQ(LatestPointerName("2", 1), "latest-out1-rank2.json");
  EXPECT_EQ(ManifestName("0"), "manifest.json");
  EXPECT_EQ(ManifestName("5"), "manifest-rank5.json");
}

TEST(ClaimAttempt, CountsUpPerRank) {
  auto store = storage::MakeMemoryStore();
  AttemptClaimOptions o{.token = "t1", .details = "{}"};
  EXPECT_EQ(*ClaimAttempt(*store, "r/_ferry/", "0", o), 0);
  o.token = "t2";
  EXPECT_EQ(*ClaimAttempt(*store, "r/_ferry/", "0", o), 1);
  o.token = "t3";
  EXPECT_EQ(*ClaimAttempt(*store, "r/_ferry/", "0", o), 2);
  EXPECT_EQ(*ClaimAttempt(*store, "r/_ferry/", "1", o), 0);  // rank 1 counts its own
  EXPECT_EQ(*ClaimAttempt(*store, "other/_ferry/", "0", o), 0);
  EXPECT_TRUE(store->Stat("r/_ferry/attempts/rank0/000002.t3.json").ok());
}

TEST(ClaimAttempt, AnotherClaimOnTheSameNumberMeansMovingOn) {
  auto store = storage::MakeMemoryStore();
  // A rival wrote a claim for 0 at the same time (before our list came back).
  ASSERT_TRUE(store->WriteAll("r/_ferry/attempts/rank0/000000.zz.json", "{}").ok());
  int tries = 0;
  AttemptClaimOptions o{.token = "aa", .details = "{}", .back_off = [&](int) { ++tries; }};
  EXPECT_EQ(*ClaimAttempt(*store, "r/_ferry/", "0", o), 1);
  EXPECT_EQ(tries, 0);  // 0 was visibly taken before we wrote: counted past it
}

TEST(ClaimAttempt, RacingRunsNeverHoldTheSameNumber) {
  auto store = storage::MakeMemoryStore();
  constexpr int kRuns = 8;
  std::vector<int> got(kRuns, -1);
  std::vector<std::thread> runs;
  for (int i = 0; i < kRuns; ++i) {
    runs.emplace_back([&, i] {
      AttemptClaimOptions o{.token = "t" + std::to_string(i),
                            .details = "{}",
                            .max_tries = 1000,
                            .back_off = [](int) { std::this_thread::yield(); }};
      auto n = ClaimAttempt(*store, "r/_ferry/", "0", o);
      if (n.ok()) got[static_cast<size_t>(i)] = *n;
    });
  }
  for (auto& t : runs) t.join();
  std::sort(got.begin(), got.end());
  for (int i = 0; i < kRuns; ++i) EXPECT_GE(got[static_cast<size_t>(i)], 0);
  EXPECT_EQ(std::adjacent_find(got.begin(), got.end()), got.end()) << "two runs hold one number";
}

TEST(ClaimAttempt, ErrorsNameWhere) {
  auto store = storage::MakeMemoryStore();
  ASSERT_TRUE(store->WriteAll("r/_ferry/attempts/rank0/000000.zz.json", "{}").ok());
  AttemptClaimOptions o{.token = "aa", .details = "{}", .max_tries = 0};
  auto n = ClaimAttempt(*store, "r/_ferry/", "0", o);
  ASSERT_FALSE(n.ok());
  EXPECT_NE(n.status().message().find("counting attempts at"), std::string::npos)
      << n.status().message();
}

}  // namespace
}  // namespace ferry::job
