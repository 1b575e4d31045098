#pragma once
// A tiny registry of counters and gauges, rendered in the Prometheus text format (version
// 0.0.4) for GET /metrics. Thread-safe: metrics are created under a lock and updated with
// atomics; the references Get*() returns stay valid as long as the registry.

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "base/mutex.h"

namespace ferry::server {

// Label name/value pairs, e.g. {{"code", "200"}}. Order is kept as given.
using Labels = std::vector<std::pair<std::string, std::string>>;

class Counter final {
 public:
  void Add(uint64_t n = 1) { value_.fetch_add(n, std::memory_order_relaxed); }
  uint64_t value() const { return value_.load(std::memory_order_relaxed); }
  // For a collector mirroring a count kept elsewhere (AddCollector); never moves backwards.
  void Mirror(uint64_t v) {
    uint64_t cur = value();
    while (v > cur && !value_.compare_exchange_weak(cur, v, std::memory_order_relaxed)) {
    }
  }

 private:
  std::atomic<uint64_t> value_{0};
};

class Gauge final {
 public:
  void Set(int64_t v) { value_.store(v, std::memory_order_relaxed); }
  void Add(int64_t n) { value_.fetch_add(n, std::memory_order_relaxed); }
  int64_t value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<int64_t> value_{0};
};

class MetricsRegistry final {
 public:
  // The counter/gauge `name` with `labels`, created on first use. `help` is taken from the
  // first call for a name. The name must match [a-zA-Z_:][a-zA-Z0-9_:]* and label names
  // [a-zA-Z_][a-zA-Z0-9_]*; a bad name or using one name as both kinds is a programming error
  // (std::abort, so it is found by the first test that touches it).
  Counter& GetCounter(const std::string& name, const std::string& help, const Labels& labels = {})
      EXCLUDES(mu_);
  Gauge& GetGauge(const std::string& name, const std::string& help, const Labels& labels = {})
      EXCLUDES(mu_);

  // Adds a function run at the start of each RenderPrometheus(), without the registry's lock,
  // to bring metrics kept elsewhere up to date (Counter::Mirror, Gauge::Set): a module's own
  // counters (the blob cache's) appear in /metrics without the module depending on the server.
  void AddCollector(std::function<void(MetricsRegistry&)> collect) EXCLUDES(mu_);

  // Every metric, families sorted by name, series in creation order, label values escaped.
  std::string RenderPrometheus() EXCLUDES(mu_);

 private:
  struct Family {
    bool is_counter = true;
    std::string help;
    std::vector<std::pair<Labels, const void*>> series;  // points into counters_/gauges_
  };
  Family& FamilyFor(const std::string& name, const std::string& help, bool is_counter,
                    const Labels& labels) REQUIRES(mu_);
  mutable Mutex mu_;
  std::vector<std::function<void(MetricsRegistry&)>> collectors_ GUARDED_BY(mu_);
  std::map<std::string, Family> families_ GUARDED_BY(mu_);
  std::deque<Counter> counters_ GUARDED_BY(mu_);  // deque: stable addresses
  std::deque<Gauge> gauges_ GUARDED_BY(mu_);
};

}  // namespace ferry::server
