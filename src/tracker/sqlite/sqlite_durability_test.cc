// Every acknowledged write survives kill -9 of the process (tracker_store.h's promise; WAL with
// synchronous=NORMAL, see sqlite_tracker_store.h).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <set>

#include "tracker/sqlite/sqlite_tracker_store.h"

namespace ferry::tracker {
namespace {

constexpr int kPointsPerBatch = 100;

// The child: logs batch after batch to a new run and reports each acknowledged one on `fd`
// ("R<run id>\n" first, then "<batch>\n"); never returns.
[[noreturn]] void LogUntilKilled(const std::string& path, int fd) {
  auto store = SqliteTrackerStore::Open(path);
  if (!store.ok()) _exit(2);
  auto run = (*store)->CreateRun({.experiment_id = "0", .artifact_root = "/a"});
  if (!run.ok()) _exit(3);
  std::string line = "R" + run->run_id + "\n";
  if (write(fd, line.data(), line.size()) < 0) _exit(4);
  for (int batch = 0;; ++batch) {
    std::vector<MetricPoint> points;
    for (int i = 0; i < kPointsPerBatch; ++i) {
      int64_t step = int64_t{batch} * kPointsPerBatch + i;
      points.push_back({"loss", 1.0 / static_cast<double>(step + 1), step, step});
    }
    if (!(*store)->LogBatch(run->run_id, points, {}, {}).ok()) _exit(5);
    line = std::to_string(batch) + "\n";
    if (write(fd, line.data(), line.size()) < 0) _exit(6);
  }
}

TEST(TrackerSqliteDurabilityTest, AcknowledgedPointsSurviveKill9) {
  auto dir =
      std::filesystem::temp_directory_path() / ("ferry-tracker-kill-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string path = (dir / "kill.sqlite").string();
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(fds[0]);
    LogUntilKilled(path, fds[1]);
  }
  close(fds[1]);
  FILE* in = fdopen(fds[0], "r");
  ASSERT_NE(in, nullptr);
  char buf[128];
  std::string run_id;
  int acked = -1;
  while (acked < 30 && std::fgets(buf, sizeof buf, in)) {
    std::string line(buf);
    if (line[0] == 'R') {
      run_id = line.substr(1, 32);
    } else {
      acked = std::stoi(line);
    }
  }
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status)) << "the child stopped by itself: " << status;
  // Acknowledgements already in the pipe when it died count too.
  while (std::fgets(buf, sizeof buf, in)) acked = std::stoi(buf);
  std::fclose(in);
  ASSERT_EQ(run_id.size(), 32u);
  ASSERT_GE(acked, 30);

  auto store = SqliteTrackerStore::Open(path);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  std::set<int64_t> steps;
  std::string token;
  do {
    auto page = (*store)->GetMetricHistory(run_id, "loss", 10000, token);
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    for (const auto& p : page->items) steps.insert(p.step);
    token = page->next_page_token;
  } while (!token.empty());
  int64_t want = int64_t{acked + 1} * kPointsPerBatch;
  ASSERT_GE(static_cast<int64_t>(steps.size()), want);
  for (int64_t s = 0; s < want; ++s) ASSERT_TRUE(steps.count(s)) << "lost step " << s;
  // The summaries agree with the points (the sampled answer has the first and last step).
  auto sample = (*store)->GetMetricHistoryBulkInterval({run_id}, "loss", {}, {}, 100);
  ASSERT_TRUE(sample.ok());
  EXPECT_EQ(sample->front().step, 0);
  EXPECT_EQ(sample->back().step, *steps.rbegin());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ferry::tracker
