// The web UI benchmark's data (bench/ui_bench.py, docs/benchmarks.md), written straight into a
// tracker SQLite file (logging 1e8 points over HTTP would take hours):
//   ui_fixture DB CURVE_RUNS POINTS TABLE_RUNS
// experiment "curves": CURVE_RUNS runs with POINTS points of "loss" each (steps 0..POINTS-1,
// a spike of +5 at every step divisible by 99991, and one of +50 at step POINTS/2 in run 0);
// experiment "table": TABLE_RUNS runs with metrics loss/acc, params lr/layers and tag team;
// experiment "grid" (mlflow#9779's compare view): 10 runs x 10 keys x 10,000 steps.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "tracker/sqlite/sqlite_tracker_store.h"

namespace ferry::tracker {
namespace {

void Check(const Status& s, const char* what) {
  if (!s.ok()) {
    std::fprintf(stderr, "%s: %s\n", what, s.ToString().c_str());
    std::exit(1);
  }
}

constexpr int64_t kStart = 1764547200000;  // 2025-12-01

void Curves(TrackerStore& store, int runs, int64_t points) {
  auto exp = store.CreateExperiment("curves", "mlflow-artifacts:/curves", {});
  Check(exp.status(), "CreateExperiment");
  std::vector<MetricPoint> batch;
  for (int r = 0; r < runs; ++r) {
    auto run = store.CreateRun({.experiment_id = *exp,
                                .run_name = "curve-" + std::to_string(r),
                                .start_time = kStart + r * 1000,
                                .artifact_root = "mlflow-artifacts:/curves"});
    Check(run.status(), "CreateRun");
    std::mt19937_64 rng(static_cast<uint64_t>(r));
    std::normal_distribution<double> noise(0, 0.02);
    for (int64_t from = 0; from < points; from += 10000) {
      batch.clear();
      for (int64_t step = from; step < std::min(points, from + 10000); ++step) {
        double v = (1 + r * 0.01) / std::sqrt(static_cast<double>(step + 1)) + noise(rng);
        if (step % 99991 == 0) v += 5;
        if (r == 0 && step == points / 2) v = 50;
        batch.push_back({"loss", v, kStart + r * 1000 + step * 100, step});
      }
      Check(store.LogBatch(run->run_id, batch, {}, {}), "LogBatch");
    }
    Check(store
              .UpdateRun(run->run_id, {.status = RunStatus::kFinished,
                                       .end_time = kStart + r * 1000 + points * 100})
              .status(),
          "UpdateRun");
    std::fprintf(stderr, "\rcurves: run %d/%d", r + 1, runs);
  }
  std::fprintf(stderr, "\n");
}

void Table(TrackerStore& store, int runs) {
  auto exp = store.CreateExperiment("table", "mlflow-artifacts:/table", {});
  Check(exp.status(), "CreateExperiment");
  for (int i = 0; i < runs; ++i) {
    char name[32];
    std::snprintf(name, sizeof(name), "trial-%05d", i);
    auto run = store.CreateRun({.experiment_id = *exp,
                                .run_name = name,
                                .start_time = kStart + int64_t{i} * 1000,
                                .artifact_root = "mlflow-artifacts:/table"});
    Check(run.status(), "CreateRun");
    double loss = static_cast<double>((int64_t{i} * 7919) % 10007) / 10007;
    Check(store.LogBatch(run->run_id,
                         {{"loss", loss, kStart, 1}, {"acc", (i % 1000) / 1000.0, kStart, 1}},
                         {{"lr", std::to_string(std::pow(10.0, -(1 + i % 4)))},
                          {"layers", std::to_string(i % 50)}},
                         {{"team", i % 3 ? "vision" : "nlp"}}),
          "LogBatch");
    if (i % 1000 == 999) std::fprintf(stderr, "\rtable: run %d/%d", i + 1, runs);
  }
  std::fprintf(stderr, "\n");
}

void Grid(TrackerStore& store) {
  auto exp = store.CreateExperiment("grid", "mlflow-artifacts:/grid", {});
  Check(exp.status(), "CreateExperiment");
  std::vector<MetricPoint> batch;
  for (int r = 0; r < 10; ++r) {
    auto run = store.CreateRun({.experiment_id = *exp,
                                .run_name = "grid-" + std::to_string(r),
                                .start_time = kStart,
                                .artifact_root = "mlflow-artifacts:/grid"});
    Check(run.status(), "CreateRun");
    for (int64_t from = 0; from < 10000; from += 1000) {
      batch.clear();
      for (int64_t step = from; step < from + 1000; ++step) {
        for (int k = 0; k < 10; ++k) {
          batch.push_back({"metric_" + std::to_string(k),
                           (k + 1) / std::sqrt(static_cast<double>(step + 1)) + r * 0.01,
                           kStart + step * 100, step});
        }
      }
      Check(store.LogBatch(run->run_id, batch, {}, {}), "LogBatch");
    }
  }
}

}  // namespace
}  // namespace ferry::tracker

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: ui_fixture DB CURVE_RUNS POINTS TABLE_RUNS\n");
    return 2;
  }
  auto store = ferry::tracker::SqliteTrackerStore::Open(argv[1]);
  ferry::tracker::Check(store.status(), "Open");
  auto start = std::chrono::steady_clock::now();
  ferry::tracker::Curves(**store, std::atoi(argv[2]), std::atoll(argv[3]));
  ferry::tracker::Table(**store, std::atoi(argv[4]));
  ferry::tracker::Grid(**store);
  std::fprintf(stderr, "fixture written in %.0f s\n",
               std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return 0;
}
