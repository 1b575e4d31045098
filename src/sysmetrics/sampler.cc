#include "sysmetrics/sampler.h"

#include <sys/statvfs.h>

#include <fstream>
#include <sstream>

namespace ferry::sysmetrics {

namespace {

constexpr double kMega = 1e6;  // MLflow's megabytes

}  // namespace

std::vector<Metric> GpuMetrics(size_t index, const GpuReading& g) {
  std::vector<Metric> out;
  const std::string p = "system/gpu_" + std::to_string(index) + "_";
  if (g.utilization_percent) out.push_back({p + "utilization_percentage", *g.utilization_percent});
  if (g.memory_used_bytes && g.memory_total_bytes && *g.memory_total_bytes > 0) {
    out.push_back(
        {p + "memory_usage_percentage", 100.0 * static_cast<double>(*g.memory_used_bytes) /
                                            static_cast<double>(*g.memory_total_bytes)});
    out.push_back(
        {p + "memory_usage_megabytes", static_cast<double>(*g.memory_used_bytes) / kMega});
  }
  if (g.power_watts) out.push_back({p + "power_usage_watts", *g.power_watts});
  if (g.temperature_celsius) out.push_back({p + "temperature_celsius", *g.temperature_celsius});
  return out;
}

SystemSampler::SystemSampler(SamplerOptions options) : options_(std::move(options)) {
  if (options_.gpus) {
    nvml_ = Nvml::Load(&gpu_note_, options_.nvml_library);
  } else {
    gpu_note_ = "GPU metrics off";
  }
  if (auto c = ParseProcStat(Read("stat")); c.ok()) cpu_ = *c;
  std::string disk = Read("diskstats");
  if (!disk.empty()) disk_ = ParseDiskstats(disk);
  std::string net = Read("net/dev");
  if (!net.empty()) net_start_ = ParseNetDev(net);
  at_ = std::chrono::steady_clock::now();
}

SystemSampler::~SystemSampler() = default;

std::string SystemSampler::Read(const char* file) const {
  // /proc files report size 0: read them as streams.
  std::ifstream in(options_.proc_root + "/" + file);
  if (!in) return "";
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<Metric> SystemSampler::Sample() {
  std::vector<Metric> out;
  const auto now = std::chrono::steady_clock::now();
  const double seconds = std::chrono::duration<double>(now - at_).count();
  at_ = now;
  if (auto c = ParseProcStat(Read("stat")); c.ok()) {
    if (cpu_) out.push_back({"system/cpu_utilization_percentage", CpuPercent(*cpu_, *c)});
    cpu_ = *c;
  }
  if (auto m = ParseMeminfo(Read("meminfo")); m.ok() && m->total > 0) {
    out.push_back({"system/system_memory_usage_megabytes", static_cast<double>(m->used()) / kMega});
    out.push_back({"system/system_memory_usage_percentage",
                   100.0 * static_cast<double>(m->used()) / static_cast<double>(m->total)});
  }
  struct statvfs fs {};
  if (::statvfs(options_.disk_path.c_str(), &fs) == 0 && fs.f_blocks > 0) {
    const double unit = static_cast<double>(fs.f_frsize);
    const double used = static_cast<double>(fs.f_blocks - fs.f_bfree) * unit;
    const double avail = static_cast<double>(fs.f_bavail) * unit;
    // As df (and psutil): used / (used + what unprivileged users may still use).
    out.push_back(
        {"system/disk_usage_percentage", used + avail > 0 ? 100 * used / (used + avail) : 0});
    out.push_back({"system/disk_usage_megabytes", used / kMega});
    out.push_back({"system/disk_available_megabytes", avail / kMega});
  }
  if (std::string text = Read("diskstats"); !text.empty()) {
    DiskIo d = ParseDiskstats(text);
    if (disk_ && seconds > 0 && d.read_bytes >= disk_->read_bytes &&
        d.write_bytes >= disk_->write_bytes) {
      out.push_back({"system/disk_read_megabytes_per_second",
                     static_cast<double>(d.read_bytes - disk_->read_bytes) / kMega / seconds});
      out.push_back({"system/disk_write_megabytes_per_second",
                     static_cast<double>(d.write_bytes - disk_->write_bytes) / kMega / seconds});
    }
    disk_ = d;
  }
  if (std::string text = Read("net/dev"); !text.empty() && net_start_) {
    NetIo n = ParseNetDev(text);
    auto since = [](uint64_t now_bytes, uint64_t start) {
      return now_bytes >= start ? static_cast<double>(now_bytes - start) / kMega : 0.0;
    };
    out.push_back({"system/network_receive_megabytes", since(n.rx_bytes, net_start_->rx_bytes)});
    out.push_back({"system/network_transmit_megabytes", since(n.tx_bytes, net_start_->tx_bytes)});
  }
  if (nvml_) {
    auto gpus = nvml_->Read();
    for (size_t i = 0; i < gpus.size(); ++i) {
      for (auto& m : GpuMetrics(i, gpus[i])) out.push_back(std::move(m));
    }
  }
  return out;
}

}  // namespace ferry::sysmetrics
