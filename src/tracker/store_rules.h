#pragma once
// Small rules every TrackerStore backend applies the same way (header-only so tracker/memory and
// tracker/sqlite share them without a library): run ids and generated run names, artifact
// URIs, the order of metric values (NaN included) and the "latest metric" rule.

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <tuple>

#include "tracker/model.h"

namespace ferry::tracker::rules {

// The tag MLflow keeps the run name in; CreateRun/UpdateRun/LogBatch keep it and
// RunInfo::run_name equal.
inline constexpr std::string_view kRunNameTag = "mlflow.runName";

inline int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// 32 lower-case hex digits from `rng` (the caller serialises access to it).
inline std::string NewRunId(std::mt19937_64& rng) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id;
  for (int half = 0; half < 2; ++half) {
    uint64_t r = rng();
    for (int i = 0; i < 16; ++i, r >>= 4) id.push_back(kHex[r & 15]);
  }
  return id;
}

// "<adjective>-<animal>-<number>", the shape of MLflow's generated run names.
inline std::string GenerateRunName(std::mt19937_64& rng) {
  static constexpr std::string_view kAdjectives[] = {
      "brave",  "calm",  "clever", "eager",  "gentle", "honest", "jolly", "kind",
      "lively", "merry", "nimble", "polite", "proud",  "quiet",  "swift", "witty"};
  static constexpr std::string_view kAnimals[] = {"ant",  "bat",   "cat",  "deer", "eel",  "fox",
                                                  "goat", "hawk",  "ibis", "lynx", "mole", "newt",
                                                  "owl",  "panda", "seal", "wolf"};
  uint64_t r = rng();
  return std::string(kAdjectives[r % 16]) + "-" + std::string(kAnimals[(r >> 8) % 16]) + "-" +
         std::to_string((r >> 16) % 1000);
}

// root + "/<run_id>/artifacts", without doubling a trailing '/' of root.
inline std::string RunArtifactUri(std::string root, const std::string& run_id) {
  while (!root.empty() && root.back() == '/') root.pop_back();
  return root + "/" + run_id + "/artifacts";
}

// Metric values in a total order: -inf < finite < +inf < NaN (so a NaN shows as a bucket's
// maximum: a diverged loss is a spike worth seeing).
inline bool ValueLess(double a, double b) {
  if (std::isnan(a)) return false;
  if (std::isnan(b)) return true;
  return a < b;
}
inline bool ValueEqual(double a, double b) { return !ValueLess(a, b) && !ValueLess(b, a); }

// One canonical NaN and one zero, so values equal under ValueEqual are the same stored value
// (two NaN points at the same step and time are one point; a retried batch dedups).
inline double CanonicalValue(double v) {
  if (std::isnan(v)) return std::numeric_limits<double>::quiet_NaN();
  return v == 0 ? 0.0 : v;
}
// A value as an int64 whose signed order is ValueLess's order (IEEE-754 bits with the negative
// half flipped), so a database can store, index and compare values as integers exactly.
inline int64_t OrderedBits(double v) {
  int64_t b = std::bit_cast<int64_t>(CanonicalValue(v));
  return b >= 0 ? b : b ^ std::numeric_limits<int64_t>::max();
}
inline double FromOrderedBits(int64_t b) {
  return std::bit_cast<double>(b >= 0 ? b : b ^ std::numeric_limits<int64_t>::max());
}

// History order: step, then timestamp, then value.
inline bool PointBefore(const MetricPoint& a, const MetricPoint& b) {
  if (std::tie(a.step, a.timestamp_ms) != std::tie(b.step, b.timestamp_ms)) {
    return std::tie(a.step, a.timestamp_ms) < std::tie(b.step, b.timestamp_ms);
  }
  return ValueLess(a.value, b.value);
}
// MLflow's "latest" point of a metric: the highest step, then timestamp, then value.
inline bool LaterThan(const MetricPoint& a, const MetricPoint& b) { return PointBefore(b, a); }

// Experiments in the order searches return them (creation time, newest first, then id) and
// the page [offset, offset + max_results) with the next page's token (the offset, as text).
inline Page<Experiment> SortAndPageExperiments(std::vector<Experiment> all, size_t offset,
                                               int max_results) {
  std::sort(all.begin(), all.end(), [](const Experiment& a, const Experiment& b) {
    if (a.creation_time != b.creation_time) return a.creation_time > b.creation_time;
    return std::stoll(a.id) < std::stoll(b.id);
  });
  Page<Experiment> page;
  size_t end = std::min(all.size(), offset + static_cast<size_t>(max_results));
  for (size_t i = offset; i < end; ++i) page.items.push_back(std::move(all[i]));
  if (end < all.size()) page.next_page_token = std::to_string(end);
  return page;
}

}  // namespace ferry::tracker::rules
