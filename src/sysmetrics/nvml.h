#pragma once
// NVIDIA GPUs through NVML, loaded at run time with dlopen("libnvidia-ml.so.1") so that Ferry
// neither links nor needs the driver: a machine without it simply has no GPU metrics. Only the
// few functions below are declared (nvml.cc); no NVML header is needed to build.
//
// Thread-safety: Load() once; Read() may be called from one thread at a time.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ferry::sysmetrics {

// One GPU's reading; a value the driver cannot give (not supported, a lost GPU) is nullopt.
struct GpuReading {
  std::optional<double> utilization_percent;  // nvmlDeviceGetUtilizationRates().gpu
  std::optional<uint64_t> memory_used_bytes, memory_total_bytes;
  std::optional<double> temperature_celsius;  // the GPU die
  std::optional<double> power_watts;
};

class Nvml {
 public:
  // Loads `library` and initialises NVML. nullptr when the library is absent or nvmlInit fails
  // (no driver, no GPU); `why` then says which, for one info line. Never an error.
  static std::unique_ptr<Nvml> Load(std::string* why,
                                    const std::string& library = "libnvidia-ml.so.1");
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  // How many GPUs NVML saw at Load().
  size_t count() const { return devices_.size(); }
  // Reads every GPU, in NVML's index order.
  std::vector<GpuReading> Read();

 private:
  struct Api;
  Nvml(void* handle, std::unique_ptr<Api> api);

  void* handle_;
  std::unique_ptr<Api> api_;
  std::vector<void*> devices_;  // nvmlDevice_t
};

}  // namespace ferry::sysmetrics
