#pragma once
// Pure parsers of the Linux /proc files the system-metrics sampler reads, and the arithmetic
// between two readings. No file access here: sampler.cc reads, these functions interpret, so
// every rule is unit-tested on sample text (proc_parsers_test.cc).

#include <cstdint>
#include <string_view>

#include "base/status.h"

namespace ferry::sysmetrics {

// The aggregate "cpu" line of /proc/stat, in clock ticks since boot.
struct CpuTimes {
  uint64_t busy = 0;   // user + nice + system + irq + softirq + steal
  uint64_t total = 0;  // busy + idle + iowait
};
// Errors: no "cpu " line, or one with fewer than 4 numbers.
Result<CpuTimes> ParseProcStat(std::string_view text);
// CPU utilisation between two readings, 0-100; 0 when no tick passed.
double CpuPercent(const CpuTimes& before, const CpuTimes& after);

// /proc/meminfo's MemTotal and MemAvailable, in bytes.
struct MemInfo {
  uint64_t total = 0;
  uint64_t available = 0;
  uint64_t used() const { return total > available ? total - available : 0; }
};
// Errors: MemTotal missing. A kernel without MemAvailable (before 3.14) gives MemFree +
// Buffers + Cached.
Result<MemInfo> ParseMeminfo(std::string_view text);

// Bytes read and written since boot by whole disks (/proc/diskstats; sectors are 512 bytes
// whatever the device's block size). Partitions, device-mapper and md devices are left out so
// nothing is counted twice, and so are loop, ram and zram devices (not disks).
struct DiskIo {
  uint64_t read_bytes = 0;
  uint64_t write_bytes = 0;
};
DiskIo ParseDiskstats(std::string_view text);
// Whether a /proc/diskstats name is a whole physical disk by the rule above.
bool IsWholeDisk(std::string_view name);

// Bytes received and sent since boot by every interface but loopback (/proc/net/dev).
struct NetIo {
  uint64_t rx_bytes = 0;
  uint64_t tx_bytes = 0;
};
NetIo ParseNetDev(std::string_view text);

}  // namespace ferry::sysmetrics
