// A stand-in for NVIDIA's libnvidia-ml.so.1 (NVML), built as a shared library of that name so
// that tests exercise Ferry's real path on a machine without a GPU: dlopen by soname through
// LD_LIBRARY_PATH, dlsym of the _v2 entry points, and the documented ABI and return codes of the
// eight functions Ferry calls (nvml.h of CUDA 12: nvmlReturn_t is an int, NVML_SUCCESS 0,
// NVML_ERROR_UNINITIALIZED 1, INVALID_ARGUMENT 2, NOT_SUPPORTED 3, DRIVER_NOT_LOADED 9,
// GPU_IS_LOST 15; memory in bytes, power in milliwatts, NVML_TEMPERATURE_GPU 0).
//
// Environment:
//   FERRY_NVML_STANDIN_GPUS=N   GPUs present (default 2)
//   FERRY_NVML_STANDIN_INIT=E   nvmlInit_v2 returns E (e.g. 9: no driver loaded)
//   FERRY_NVML_STANDIN_LOST=I   GPU I answers every query with GPU_IS_LOST
// GPU i reads: utilization 40 + 10i %, memory (i + 1) x 4 GiB used of 80 GiB, 50 + i degrees;
// power 300.5 W on GPU 0, NOT_SUPPORTED on the others (as on GPUs without a power sensor).

#include <cstdlib>

namespace {

constexpr int kSuccess = 0, kUninitialized = 1, kInvalidArgument = 2, kNotSupported = 3,
              kGpuIsLost = 15;

struct Device {
  unsigned int index;
};
Device g_devices[16] = {{0}, {1}, {2},  {3},  {4},  {5},  {6},  {7},
                        {8}, {9}, {10}, {11}, {12}, {13}, {14}, {15}};
int g_init_count = 0;

int EnvInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : fallback;
}

unsigned int GpuCount() {
  int n = EnvInt("FERRY_NVML_STANDIN_GPUS", 2);
  return n < 0 ? 0u : static_cast<unsigned int>(n > 16 ? 16 : n);
}

// SUCCESS for a usable device, else the error every query returns.
int Check(const void* device) {
  if (g_init_count == 0) return kUninitialized;
  const auto* d = static_cast<const Device*>(device);
  if (d < g_devices || d >= g_devices + GpuCount()) return kInvalidArgument;
  if (EnvInt("FERRY_NVML_STANDIN_LOST", -1) == static_cast<int>(d->index)) return kGpuIsLost;
  return kSuccess;
}

}  // namespace

extern "C" {

struct nvmlUtilization_t {
  unsigned int gpu;
  unsigned int memory;
};
struct nvmlMemory_t {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

__attribute__((visibility("default"))) int nvmlInit_v2() {
  if (int e = EnvInt("FERRY_NVML_STANDIN_INIT", 0); e != 0) return e;
  ++g_init_count;
  return kSuccess;
}

__attribute__((visibility("default"))) int nvmlShutdown() {
  if (g_init_count == 0) return kUninitialized;
  --g_init_count;
  return kSuccess;
}

__attribute__((visibility("default"))) int nvmlDeviceGetCount_v2(unsigned int* count) {
  if (g_init_count == 0) return kUninitialized;
  if (!count) return kInvalidArgument;
  *count = GpuCount();
  return kSuccess;
}

__attribute__((visibility("default"))) int nvmlDeviceGetHandleByIndex_v2(unsigned int index,
                                                                         void** device) {
  if (g_init_count == 0) return kUninitialized;
  if (!device || index >= GpuCount()) return kInvalidArgument;
  *device = &g_devices[index];
  return kSuccess;
}

__attribute__((visibility("default"))) int nvmlDeviceGetUtilizationRates(void* device,
                                                                         nvmlUtilization_t* u) {
  if (int e = Check(device); e != kSuccess) return e;
  if (!u) return kInvalidArgument;
  unsigned int i = static_cast<Device*>(device)->index;
  u->gpu = 40 + 10 * i;
  u->memory = 20 + i;
  return kSuccess;
}

__attribute__((visibility("default"))) int nvmlDeviceGetMemoryInfo(void* device, nvmlMemory_t* m) {
  if (int e = Check(device); e != kSuccess) return e;
  if (!m) return kInvalidArgument;
  unsigned long long i = static_cast<Device*>(device)->index;
  m->total = 80ull << 30;
  m->used = (i + 1) * (4ull << 30);
  m->free = m->total - m->used;
  return kSuccess;
}

__attribute__((visibility("default"))) int nvmlDeviceGetTemperature(void* device, int sensor,
                                                                    unsigned int* t) {
  if (int e = Check(device); e != kSuccess) return e;
  if (!t || sensor != 0) return kInvalidArgument;
  *t = 50 + static_cast<Device*>(device)->index;
  return kSuccess;
}

__attribute__((visibility("default"))) int nvmlDeviceGetPowerUsage(void* device,
                                                                   unsigned int* milliwatts) {
  if (int e = Check(device); e != kSuccess) return e;
  if (!milliwatts) return kInvalidArgument;
  if (static_cast<Device*>(device)->index != 0) return kNotSupported;
  *milliwatts = 300500;
  return kSuccess;
}

}  // extern "C"
