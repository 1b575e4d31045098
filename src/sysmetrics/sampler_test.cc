#include "sysmetrics/sampler.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

namespace ferry::sysmetrics {
namespace {

std::map<std::string, double> ByName(const std::vector<Metric>& ms) {
  std::map<std::string, double> out;
  for (const auto& m : ms) out[m.name] = m.value;
  return out;
}

void Write(const std::filesystem::path& p, const std::string& text) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

TEST(SamplerTest, GpuMetricsUseMlflowNames) {
  GpuReading g{.utilization_percent = 87,
               .memory_used_bytes = 40'000'000'000ull,
               .memory_total_bytes = 80'000'000'000ull,
               .temperature_celsius = 61,
               .power_watts = 312.5};
  auto m = ByName(GpuMetrics(1, g));
  EXPECT_DOUBLE_EQ(m.at("system/gpu_1_utilization_percentage"), 87);
  EXPECT_DOUBLE_EQ(m.at("system/gpu_1_memory_usage_percentage"), 50);
  EXPECT_DOUBLE_EQ(m.at("system/gpu_1_memory_usage_megabytes"), 40000);
  EXPECT_DOUBLE_EQ(m.at("system/gpu_1_power_usage_watts"), 312.5);
  EXPECT_DOUBLE_EQ(m.at("system/gpu_1_temperature_celsius"), 61);
  // What the driver does not report is left out, not sent as 0.
  EXPECT_TRUE(GpuMetrics(0, GpuReading{}).empty());
}

TEST(SamplerTest, SamplesFromAProcDirectory) {
  auto root = std::filesystem::temp_directory_path() / ("sysmetrics-" + std::to_string(::getpid()));
  Write(root / "stat", "cpu  100 0 100 800 0 0 0 0 0 0\n");
  Write(root / "meminfo", "MemTotal: 1000 kB\nMemAvailable: 250 kB\n");
  Write(root / "diskstats", "8 0 sda 1 0 0 1 1 0 0 1 0 1 1\n");
  Write(root / "net/dev", "h\nh\n eth0: 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n");
  SystemSampler sampler({.proc_root = root.string(), .disk_path = root.string(), .gpus = false});
  EXPECT_EQ(sampler.gpu_note(), "GPU metrics off");
  Write(root / "stat", "cpu  200 0 200 900 0 0 0 0 0 0\n");  // 200 busy of 300 ticks
  Write(root / "net/dev", "h\nh\n eth0: 3000000 0 0 0 0 0 0 0 1000000 0 0 0 0 0 0 0\n");
  auto m = ByName(sampler.Sample());
  std::filesystem::remove_all(root);
  EXPECT_NEAR(m.at("system/cpu_utilization_percentage"), 200.0 / 3, 1e-9);
  EXPECT_DOUBLE_EQ(m.at("system/system_memory_usage_percentage"), 75);
  EXPECT_DOUBLE_EQ(m.at("system/system_memory_usage_megabytes"), 750 * 1024 / 1e6);
  EXPECT_DOUBLE_EQ(m.at("system/network_receive_megabytes"), 3);
  EXPECT_DOUBLE_EQ(m.at("system/network_transmit_megabytes"), 1);
  EXPECT_TRUE(m.contains("system/disk_usage_percentage"));
  EXPECT_TRUE(m.contains("system/disk_available_megabytes"));
  EXPECT_TRUE(m.contains("system/disk_read_megabytes_per_second"));
}

TEST(SamplerTest, MissingProcFilesLeaveTheirMetricsOut) {
  SystemSampler sampler({.proc_root = "/nonexistent-proc", .disk_path = "/", .gpus = false});
  auto m = ByName(sampler.Sample());
  EXPECT_FALSE(m.contains("system/cpu_utilization_percentage"));
  EXPECT_TRUE(m.contains("system/disk_usage_percentage"));
}

TEST(SamplerTest, RealProcGivesTheCoreMetrics) {
  SystemSampler sampler;
  auto m = ByName(sampler.Sample());
  for (const char* name :
       {"system/cpu_utilization_percentage", "system/system_memory_usage_megabytes",
        "system/disk_usage_percentage", "system/network_receive_megabytes"}) {
    EXPECT_TRUE(m.contains(name)) << name;
  }
}

}  // namespace
}  // namespace ferry::sysmetrics
