// The copy engine's two answers to a backend that cannot help: it stops at the first failure
// every object would meet (instead of failing thousands in turn), and it says so when nothing
// moves (StallWatch).
#include <gtest/gtest.h>

#include <thread>

#include "storage/memory/memory_store.h"
#include "storage/testing/fault_store.h"
#include "transfer/copy_engine.h"
#include "transfer/stall_watch.h"

namespace ferry::transfer {
namespace {

storage::OpenedUrl At(std::shared_ptr<storage::Store> store, std::string key) {
  storage::ParsedUrl u{.key = key, .trailing_slash = !key.empty() && key.back() == '/'};
  return storage::OpenedUrl{.store = std::move(store), .key = std::move(key), .url = u};
}

CopyResult CopyTree(std::shared_ptr<storage::Store> src, std::shared_ptr<storage::Store> dst) {
  CopyOptions options{.recursive = true, .transfers = 4};
  options.state_dir = ::testing::TempDir() + "/ferry-stop-state";
  ProgressCounters counters;
  return RunCopy(At(src, "d/"), At(dst, "o/"), options, counters);
}

std::shared_ptr<storage::testing::FaultInjectingStore> SourceOf(int objects) {
  auto inner = storage::MakeMemoryStore("src");
  for (int i = 0; i < objects; ++i) {
    EXPECT_TRUE(inner->WriteAll("d/" + std::to_string(i), "x").ok());
  }
  return std::make_shared<storage::testing::FaultInjectingStore>(inner);
}

TEST(StopAtPermanentErrorTest, RefusedCredentialsStopTheCopyAtTheFirstFailure) {
  auto src = SourceOf(3000);
  src->FailReadsFrom(1, StatusCode::kUnauthenticated);
  auto r = CopyTree(src, storage::MakeMemoryStore("dst"));
  EXPECT_EQ(r.status.code(), StatusCode::kUnauthenticated);
  EXPECT_NE(r.status.message().find("stopped at the first error"), std::string::npos)
      << r.status.message();
  EXPECT_LE(r.report.files_failed, 8u);  // those already in flight (transfers = 4) at most
  EXPECT_LT(src->reads(), 20);
}

TEST(StopAtPermanentErrorTest, AFailureOfOneObjectDoesNotStopTheOthers) {
  auto src = SourceOf(50);
  src->FailReadsFrom(1, StatusCode::kDataLoss);  // each object's own problem
  auto r = CopyTree(src, storage::MakeMemoryStore("dst"));
  EXPECT_EQ(r.status.code(), StatusCode::kDataLoss);
  EXPECT_EQ(r.report.files_failed, 50u);
  EXPECT_EQ(r.status.message().find("stopped at the first error"), std::string::npos);
}

TEST(StallWatchTest, NamesTheEndpointWhileNothingMovesAndSaysWhenItMovesAgain) {
  ProgressCounters counters;
  ::testing::internal::CaptureStderr();
  {
    StallWatch watch([&] { return counters.bytes_done.load() + counters.files_done.load(); },
                     [] { return std::string("'http://e:1'"); }, [] { return uint64_t{3}; },
                     std::chrono::milliseconds(1000));
    watch.Begin("copying 's3://b/k'");
    std::this_thread::sleep_for(std::chrono::milliseconds(1400));
    counters.bytes_done += 1;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    watch.End("copying 's3://b/k'");
  }
  std::string out = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(out.find("waiting on 'http://e:1': no progress for 1 s (copying 's3://b/k'); 3 "
                     "retries so far"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("'http://e:1' answers again"), std::string::npos) << out;
}

TEST(StallWatchTest, QuietWhenNothingIsInFlightOrWorkMoves) {
  ProgressCounters counters;
  ::testing::internal::CaptureStderr();
  {
    StallWatch watch([&] { return counters.bytes_done.load() + counters.files_done.load(); },
                     [] { return std::string("'http://e:1'"); }, [] { return uint64_t{0}; },
                     std::chrono::milliseconds(200));
    std::this_thread::sleep_for(std::chrono::milliseconds(600));  // idle: nothing in flight
    watch.Begin("copying 's3://b/k'");
    for (int i = 0; i < 6; ++i) {
      counters.files_done += 1;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    watch.End("copying 's3://b/k'");
  }
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

}  // namespace
}  // namespace ferry::transfer
