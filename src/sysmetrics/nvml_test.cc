#include "sysmetrics/nvml.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <map>

#include "sysmetrics/sampler.h"

namespace ferry::sysmetrics {
namespace {

// The stand-in libnvidia-ml.so.1 (testing/nvml_standin.cc) reads its settings from the
// environment at each call; each test sets what it needs and clears it again.
struct StandinEnv {
  StandinEnv(const char* name, const char* value) : name_(name) { ::setenv(name, value, 1); }
  ~StandinEnv() { ::unsetenv(name_); }
  const char* name_;
};

TEST(NvmlTest, AbsentLibraryIsNoGpusAndOneReason) {
  std::string why;
  auto nvml = Nvml::Load(&why, "libferry-no-such-nvml.so.1");
  EXPECT_EQ(nvml, nullptr);
  EXPECT_NE(why.find("libferry-no-such-nvml.so.1 not found"), std::string::npos) << why;
}

TEST(NvmlTest, LibraryWithoutNvmlSymbolsIsNoGpus) {
  std::string why;
  // libm is present everywhere and has no nvmlInit_v2.
  auto nvml = Nvml::Load(&why, "libm.so.6");
  EXPECT_EQ(nvml, nullptr);
  EXPECT_NE(why.find("lacks nvmlInit_v2"), std::string::npos) << why;
}

TEST(NvmlTest, ReadsEveryGpuAndLeavesOutWhatOneDoesNotSupport) {
  std::string why;
  auto nvml = Nvml::Load(&why, FERRY_NVML_STANDIN);
  ASSERT_NE(nvml, nullptr) << why;
  EXPECT_EQ(why, std::string("2 GPU(s) through ") + FERRY_NVML_STANDIN);
  ASSERT_EQ(nvml->count(), 2u);
  auto gpus = nvml->Read();
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0].utilization_percent, 40);
  EXPECT_EQ(gpus[0].memory_used_bytes, 4ull << 30);
  EXPECT_EQ(gpus[0].memory_total_bytes, 80ull << 30);
  EXPECT_EQ(gpus[0].temperature_celsius, 50);
  EXPECT_EQ(gpus[0].power_watts, 300.5);  // milliwatts from NVML
  EXPECT_EQ(gpus[1].utilization_percent, 50);
  EXPECT_EQ(gpus[1].memory_used_bytes, 8ull << 30);
  EXPECT_EQ(gpus[1].temperature_celsius, 51);
  EXPECT_FALSE(gpus[1].power_watts.has_value());  // NVML_ERROR_NOT_SUPPORTED
}

TEST(NvmlTest, FailedInitIsNoGpusAndSaysWhy) {
  StandinEnv env("FERRY_NVML_STANDIN_INIT", "9");  // NVML_ERROR_DRIVER_NOT_LOADED
  std::string why;
  EXPECT_EQ(Nvml::Load(&why, FERRY_NVML_STANDIN), nullptr);
  EXPECT_NE(why.find("nvmlInit_v2 failed (NVML error 9"), std::string::npos) << why;
}

TEST(NvmlTest, NoGpusIsNotAnError) {
  StandinEnv env("FERRY_NVML_STANDIN_GPUS", "0");
  std::string why;
  auto nvml = Nvml::Load(&why, FERRY_NVML_STANDIN);
  ASSERT_NE(nvml, nullptr) << why;
  EXPECT_EQ(nvml->count(), 0u);
  EXPECT_TRUE(nvml->Read().empty());
}

TEST(NvmlTest, ALostGpuDropsOutOfTheSampleAndTheOthersStay) {
  SystemSampler sampler({.disk_path = "/", .nvml_library = FERRY_NVML_STANDIN});
  EXPECT_EQ(sampler.gpu_note(), std::string("2 GPU(s) through ") + FERRY_NVML_STANDIN);
  std::map<std::string, double> before, after;
  for (const auto& m : sampler.Sample()) before[m.name] = m.value;
  EXPECT_DOUBLE_EQ(before.at("system/gpu_0_utilization_percentage"), 40);
  EXPECT_DOUBLE_EQ(before.at("system/gpu_0_power_usage_watts"), 300.5);
  EXPECT_DOUBLE_EQ(before.at("system/gpu_1_memory_usage_percentage"), 10);
  EXPECT_FALSE(before.contains("system/gpu_1_power_usage_watts"));
  StandinEnv lost("FERRY_NVML_STANDIN_LOST", "1");  // NVML_ERROR_GPU_IS_LOST from GPU 1 on
  for (const auto& m : sampler.Sample()) after[m.name] = m.value;
  EXPECT_TRUE(after.contains("system/gpu_0_utilization_percentage"));
  for (const auto& [name, value] : after) EXPECT_EQ(name.find("system/gpu_1_"), std::string::npos);
  EXPECT_TRUE(after.contains("system/cpu_utilization_percentage"));
}

}  // namespace
}  // namespace ferry::sysmetrics
