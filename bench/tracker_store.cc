// TrackerStore benchmark (issue 14): SqliteTrackerStore ingest and bulk-interval latency.
// Built only with -DFERRY_BENCH=ON (see docs/benchmarks.md for the command and results).
//
//   tracker_store_bench ingest DB [threads=8] [batches_per_thread=100] [wal_checkpoint_pages]
//     each thread logs batches of 1,000 points (100 steps x 10 keys) to its own run; prints
//     points/s, and the same load on MemoryTrackerStore (the peer: no I/O at all) as a ratio.
//   tracker_store_bench fixture DB RUNS POINTS
//     RUNS runs with POINTS points of key "loss" each (steps 0..POINTS-1), batches of 10,000.
//   tracker_store_bench query DB [queries=50] [max_results=320]
//     bulk-interval over all runs of DB's Default experiment (full range and random windows):
//     p50/p95/max; then the peer: reading one run's whole history (what a store without
//     summaries reads), scaled to all runs.
#include <sys/resource.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tracker/memory/memory_tracker_store.h"
#include "tracker/sqlite/sqlite_tracker_store.h"

namespace ferry::tracker {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

// Process CPU seconds (user + system): steadier than wall time on a shared machine.
double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  return s(u.ru_utime) + s(u.ru_stime);
}

int64_t FileSize(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? st.st_size : 0;
}

void Check(const Status& s, const char* what) {
  if (!s.ok()) {
    std::fprintf(stderr, "%s: %s\n", what, s.ToString().c_str());
    std::exit(1);
  }
}

// Points/s of `threads` threads each logging `batches` batches of 1,000 points to its own run.
double Ingest(TrackerStore& store, int threads, int batches) {
  std::vector<std::string> runs;
  for (int t = 0; t < threads; ++t) {
    auto run = store.CreateRun({.experiment_id = "0", .start_time = t, .artifact_root = "/a"});
    Check(run.status(), "CreateRun");
    runs.push_back(run->run_id);
  }
  auto start = Clock::now();
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      std::mt19937_64 rng(static_cast<uint64_t>(t));
      std::normal_distribution<double> noise(0, 0.01);
      std::vector<MetricPoint> batch;
      for (int b = 0; b < batches; ++b) {
        batch.clear();
        for (int s = 0; s < 100; ++s) {
          int64_t step = int64_t{b} * 100 + s;
          for (int k = 0; k < 10; ++k) {
            batch.push_back({"metric_" + std::to_string(k),
                             1.0 / std::sqrt(static_cast<double>(step + 1)) + noise(rng),
                             1700000000000 + step * 250, step});
          }
        }
        Check(store.LogBatch(runs[static_cast<size_t>(t)], batch, {}, {}), "LogBatch");
      }
    });
  }
  for (auto& w : workers) w.join();
  return static_cast<double>(threads) * batches * 1000 / Seconds(start);
}

int RunIngest(const std::string& db, int threads, int batches, int checkpoint_pages) {
  double sqlite_rate = 0;
  double cpu = CpuSeconds();
  {
    SqliteTrackerOptions options;
    if (checkpoint_pages > 0) options.wal_autocheckpoint_pages = checkpoint_pages;
    auto store = SqliteTrackerStore::Open(db, options);
    Check(store.status(), "Open");
    sqlite_rate = Ingest(**store, threads, batches);
  }  // closed: the WAL is checkpointed into the file
  cpu = CpuSeconds() - cpu;
  double points = static_cast<double>(threads) * batches * 1000;
  int64_t bytes = FileSize(db) + FileSize(db + "-wal");
  auto memory = MakeMemoryTrackerStore();
  double memory_rate = Ingest(*memory, threads, batches);
  std::printf("ingest: %d threads x %d batches x 1000 points (10 keys/step)\n", threads, batches);
  std::printf("  sqlite  %10.0f points/s   %.2f us CPU/point   file %.1f MiB = %.1f bytes/point\n",
              sqlite_rate, cpu * 1e6 / points, static_cast<double>(bytes) / (1 << 20),
              static_cast<double>(bytes) / points);
  std::printf("  memory  %10.0f points/s   (peer; sqlite/memory = %.2f)\n", memory_rate,
              sqlite_rate / memory_rate);
  return 0;
}

int RunFixture(const std::string& db, int runs, int64_t points) {
  auto store = SqliteTrackerStore::Open(db);
  Check(store.status(), "Open");
  auto start = Clock::now();
  std::vector<MetricPoint> batch;
  for (int r = 0; r < runs; ++r) {
    auto run = (*store)->CreateRun({.experiment_id = "0", .start_time = r, .artifact_root = "/a"});
    Check(run.status(), "CreateRun");
    std::mt19937_64 rng(static_cast<uint64_t>(r));
    std::normal_distribution<double> noise(0, 0.02);
    for (int64_t from = 0; from < points; from += 10000) {
      batch.clear();
      for (int64_t step = from; step < std::min(points, from + 10000); ++step) {
        double v = 1.0 / std::sqrt(static_cast<double>(step + 1)) + noise(rng);
        if (step % 99991 == 0) v += 5;  // a spike now and then
        batch.push_back({"loss", v, 1700000000000 + step * 100, step});
      }
      Check((*store)->LogBatch(run->run_id, batch, {}, {}), "LogBatch");
    }
    std::fprintf(stderr, "\rrun %d/%d  %.0f points/s", r + 1, runs,
                 static_cast<double>(points) * (r + 1) / Seconds(start));
  }
  store = Status(StatusCode::kCancelled, "closed");  // checkpoints the WAL into the file
  int64_t bytes = FileSize(db) + FileSize(db + "-wal");
  std::printf("\nfixture: %d runs x %lld points in %.1f s; file %.1f MiB = %.1f bytes/point\n",
              runs, static_cast<long long>(points), Seconds(start),
              static_cast<double>(bytes) / (1 << 20),
              static_cast<double>(bytes) / (static_cast<double>(points) * runs));
  return 0;
}

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(p * static_cast<double>(v.size() - 1))];
}

int RunQuery(const std::string& db, int queries, int max_results) {
  auto store = SqliteTrackerStore::Open(db);
  Check(store.status(), "Open");
  auto runs = (*store)->ScanRuns({.experiment_ids = {"0"}});
  Check(runs.status(), "ScanRuns");
  std::vector<std::string> ids;
  for (const auto& r : *runs) ids.push_back(r.info.run_id);
  int64_t last_step = 0;
  for (const auto& m : runs->front().latest_metrics) last_step = std::max(last_step, m.step);
  std::mt19937_64 rng(1);
  std::vector<double> full_ms, window_ms;
  size_t answer_points = 0;
  for (int q = 0; q < queries; ++q) {
    auto start = Clock::now();
    auto got = (*store)->GetMetricHistoryBulkInterval(ids, "loss", {}, {}, max_results);
    full_ms.push_back(Seconds(start) * 1000);
    Check(got.status(), "BulkInterval");
    answer_points = got->size();
    int64_t a = static_cast<int64_t>(rng() % static_cast<uint64_t>(last_step + 1));
    int64_t b = static_cast<int64_t>(rng() % static_cast<uint64_t>(last_step + 1));
    start = Clock::now();
    got = (*store)->GetMetricHistoryBulkInterval(ids, "loss", std::min(a, b), std::max(a, b),
                                                 max_results);
    window_ms.push_back(Seconds(start) * 1000);
    Check(got.status(), "BulkInterval");
  }
  std::printf("bulk-interval: %zu runs x %lld steps, max_results %d, %d queries each\n", ids.size(),
              static_cast<long long>(last_step + 1), max_results, queries);
  std::printf("  full range    p50 %7.1f ms  p95 %7.1f ms  max %7.1f ms  (%zu points answered)\n",
              Percentile(full_ms, 0.5), Percentile(full_ms, 0.95), Percentile(full_ms, 1.0),
              answer_points);
  std::printf("  random window p50 %7.1f ms  p95 %7.1f ms  max %7.1f ms\n",
              Percentile(window_ms, 0.5), Percentile(window_ms, 0.95), Percentile(window_ms, 1.0));
  // The peer: read one run's whole history, as a store without summaries must.
  auto start = Clock::now();
  size_t n = 0;
  std::string token;
  do {
    auto page = (*store)->GetMetricHistory(ids.front(), "loss", 100000, token);
    Check(page.status(), "GetMetricHistory");
    n += page->items.size();
    token = page->next_page_token;
  } while (!token.empty());
  double one = Seconds(start) * 1000;
  std::printf(
      "  peer: full history of 1 run (%zu points) %.1f ms; x %zu runs = %.0f ms "
      "(%.0fx the summary p95)\n",
      n, one, ids.size(), one * static_cast<double>(ids.size()),
      one * static_cast<double>(ids.size()) / Percentile(full_ms, 0.95));
  return 0;
}

}  // namespace
}  // namespace ferry::tracker

int main(int argc, char** argv) {
  using namespace ferry::tracker;
  std::vector<std::string> a(argv + 1, argv + argc);
  auto arg = [&](size_t i, long long def) { return a.size() > i ? std::stoll(a[i]) : def; };
  if (a.size() >= 2 && a[0] == "ingest") {
    return RunIngest(a[1], static_cast<int>(arg(2, 8)), static_cast<int>(arg(3, 100)),
                     static_cast<int>(arg(4, 0)));
  }
  if (a.size() >= 4 && a[0] == "fixture") {
    return RunFixture(a[1], static_cast<int>(arg(2, 0)), arg(3, 0));
  }
  if (a.size() >= 2 && a[0] == "query") {
    return RunQuery(a[1], static_cast<int>(arg(2, 50)), static_cast<int>(arg(3, 320)));
  }
  std::fprintf(stderr,
               "usage: tracker_store_bench ingest DB [threads] [batches] | fixture DB RUNS POINTS "
               "| query DB [queries] [max_results]\n");
  return 2;
}
