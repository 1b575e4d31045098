#pragma once
// System metrics, sampled: CPU, memory, disk usage and I/O, network I/O, and NVIDIA GPUs (NVML,
// when present). Names follow MLflow's system metrics (mlflow/system_metrics/metrics/*.py) so
// MLflow-aware UIs show them as such; megabytes are 10^6 bytes as there:
//
//   system/cpu_utilization_percentage      since the previous sample
//   system/system_memory_usage_megabytes   MemTotal - MemAvailable
//   system/system_memory_usage_percentage
//   system/disk_usage_percentage, system/disk_usage_megabytes, system/disk_available_megabytes
//                                          of the filesystem holding `disk_path` (statvfs)
//   system/network_receive_megabytes, system/network_transmit_megabytes
//                                          since the sampler started, all interfaces but lo
//   system/gpu_<i>_utilization_percentage, system/gpu_<i>_memory_usage_percentage,
//   system/gpu_<i>_memory_usage_megabytes, system/gpu_<i>_power_usage_watts
//   and Ferry's own additions:
//   system/disk_read_megabytes_per_second, system/disk_write_megabytes_per_second
//                                          whole disks, since the previous sample
//   system/gpu_<i>_temperature_celsius
//
// A source that cannot be read (a /proc without a file, a GPU that stops answering) leaves its
// metrics out of the sample; nothing here fails.
//
// Not thread-safe: one thread samples.

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "sysmetrics/nvml.h"
#include "sysmetrics/proc_parsers.h"

namespace ferry::sysmetrics {

struct Metric {
  std::string name;
  double value = 0;
};

struct SamplerOptions {
  std::string proc_root = "/proc";  // tests point it at a directory of sample files
  std::string disk_path = "/";      // the filesystem whose usage is reported
  bool gpus = true;
  std::string nvml_library = "libnvidia-ml.so.1";
};

// The GPU metrics of GPU `index`.
std::vector<Metric> GpuMetrics(size_t index, const GpuReading& g);

class SystemSampler final {
 public:
  // Takes the baseline readings (CPU ticks, disk and network counters) and loads NVML.
  explicit SystemSampler(SamplerOptions options = {});
  ~SystemSampler();

  // One sample: rates and utilisation since the previous call (or the constructor).
  std::vector<Metric> Sample();

  // What became of the GPUs: "2 GPU(s) through libnvidia-ml.so.1", or why there are none.
  const std::string& gpu_note() const { return gpu_note_; }

 private:
  std::string Read(const char* file) const;

  SamplerOptions options_;
  std::unique_ptr<Nvml> nvml_;
  std::string gpu_note_;
  std::optional<CpuTimes> cpu_;
  std::optional<DiskIo> disk_;
  std::optional<NetIo> net_start_;
  std::chrono::steady_clock::time_point at_;
};

}  // namespace ferry::sysmetrics
