#include "sysmetrics/nvml.h"

#include <dlfcn.h>

namespace ferry::sysmetrics {

namespace {

// The parts of nvml.h Ferry uses (NVML's ABI: these layouts and _v2 names have been stable
// since CUDA 5). nvmlReturn_t is an int; 0 is NVML_SUCCESS.
using NvmlReturn = int;
using NvmlDevice = void*;
struct NvmlUtilization {
  unsigned int gpu;
  unsigned int memory;
};
struct NvmlMemory {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};
constexpr int kNvmlTemperatureGpu = 0;

}  // namespace

struct Nvml::Api {
  NvmlReturn (*init)();
  NvmlReturn (*shutdown)();
  NvmlReturn (*count)(unsigned int*);
  NvmlReturn (*handle)(unsigned int, NvmlDevice*);
  NvmlReturn (*utilization)(NvmlDevice, NvmlUtilization*);
  NvmlReturn (*memory)(NvmlDevice, NvmlMemory*);
  NvmlReturn (*temperature)(NvmlDevice, int, unsigned int*);
  NvmlReturn (*power)(NvmlDevice, unsigned int*);  // milliwatts
};

std::unique_ptr<Nvml> Nvml::Load(std::string* why, const std::string& library) {
  void* h = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    if (why) *why = library + " not found (no NVIDIA driver): no GPU metrics";
    return nullptr;
  }
  auto api = std::make_unique<Api>();
  auto sym = [h](const char* name) { return ::dlsym(h, name); };
  api->init = reinterpret_cast<decltype(api->init)>(sym("nvmlInit_v2"));
  api->shutdown = reinterpret_cast<decltype(api->shutdown)>(sym("nvmlShutdown"));
  api->count = reinterpret_cast<decltype(api->count)>(sym("nvmlDeviceGetCount_v2"));
  api->handle = reinterpret_cast<decltype(api->handle)>(sym("nvmlDeviceGetHandleByIndex_v2"));
  api->utilization =
      reinterpret_cast<decltype(api->utilization)>(sym("nvmlDeviceGetUtilizationRates"));
  api->memory = reinterpret_cast<decltype(api->memory)>(sym("nvmlDeviceGetMemoryInfo"));
  api->temperature = reinterpret_cast<decltype(api->temperature)>(sym("nvmlDeviceGetTemperature"));
  api->power = reinterpret_cast<decltype(api->power)>(sym("nvmlDeviceGetPowerUsage"));
  if (!api->init || !api->shutdown || !api->count || !api->handle) {
    if (why) *why = library + " lacks nvmlInit_v2 or nvmlDeviceGetCount_v2: no GPU metrics";
    ::dlclose(h);
    return nullptr;
  }
  if (NvmlReturn r = api->init(); r != 0) {
    if (why)
      *why = library + ": nvmlInit_v2 failed (NVML error " + std::to_string(r) +
             "; no GPU or driver not loaded): no GPU metrics";
    ::dlclose(h);
    return nullptr;
  }
  std::unique_ptr<Nvml> nvml(new Nvml(h, std::move(api)));
  unsigned int n = 0;
  if (nvml->api_->count(&n) != 0) n = 0;
  for (unsigned int i = 0; i < n; ++i) {
    NvmlDevice d = nullptr;
    if (nvml->api_->handle(i, &d) == 0) nvml->devices_.push_back(d);
  }
  if (why) *why = std::to_string(nvml->devices_.size()) + " GPU(s) through " + library;
  return nvml;
}

Nvml::Nvml(void* handle, std::unique_ptr<Api> api) : handle_(handle), api_(std::move(api)) {}

Nvml::~Nvml() {
  api_->shutdown();
  ::dlclose(handle_);
}

std::vector<GpuReading> Nvml::Read() {
  std::vector<GpuReading> out;
  for (NvmlDevice d : devices_) {
    GpuReading g;
    NvmlUtilization u{};
    if (api_->utilization && api_->utilization(d, &u) == 0) g.utilization_percent = u.gpu;
    NvmlMemory m{};
    if (api_->memory && api_->memory(d, &m) == 0) {
      g.memory_used_bytes = m.used;
      g.memory_total_bytes = m.total;
    }
    unsigned int t = 0;
    if (api_->temperature && api_->temperature(d, kNvmlTemperatureGpu, &t) == 0) {
      g.temperature_celsius = t;
    }
    unsigned int mw = 0;
    if (api_->power && api_->power(d, &mw) == 0) g.power_watts = mw / 1000.0;
    out.push_back(g);
  }
  return out;
}

}  // namespace ferry::sysmetrics
