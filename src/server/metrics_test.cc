#include "server/metrics.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace ferry::server {
namespace {

TEST(MetricsRegistryTest, RendersPrometheusText) {
  MetricsRegistry m;
  m.GetCounter("ferry_requests_total", "Requests", {{"code", "200"}}).Add(3);
  m.GetCounter("ferry_requests_total", "ignored", {{"code", "404"}}).Add();
  m.GetGauge("ferry_open", "Open\nthings").Set(-2);
  EXPECT_EQ(m.RenderPrometheus(),
            "# HELP ferry_open Open\\nthings\n"
            "# TYPE ferry_open gauge\n"
            "ferry_open -2\n"
            "# HELP ferry_requests_total Requests\n"
            "# TYPE ferry_requests_total counter\n"
            "ferry_requests_total{code=\"200\"} 3\n"
            "ferry_requests_total{code=\"404\"} 1\n");
}

TEST(MetricsRegistryTest, EscapesLabelValues) {
  MetricsRegistry m;
  m.GetCounter("x", "h", {{"path", "a\"b\\c\nd"}}).Add();
  EXPECT_NE(m.RenderPrometheus().find("x{path=\"a\\\"b\\\\c\\nd\"} 1\n"), std::string::npos);
}

TEST(MetricsRegistryTest, SameSeriesIsSameObjectAcrossThreads) {
  MetricsRegistry m;
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&m] {
      for (int i = 0; i < 1000; ++i) m.GetCounter("c_total", "h", {{"k", "v"}}).Add();
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(m.GetCounter("c_total", "h", {{"k", "v"}}).value(), 8000u);
}

TEST(MetricsRegistryDeathTest, BadNameAborts) {
  MetricsRegistry m;
  EXPECT_DEATH(m.GetCounter("1bad", "h"), "invalid metric name");
  m.GetCounter("both", "h");
  EXPECT_DEATH(m.GetGauge("both", "h"), "counter and gauge");
}

}  // namespace
}  // namespace ferry::server
