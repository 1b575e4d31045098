#include "sysmetrics/proc_parsers.h"

#include <cctype>
#include <vector>

#include "base/strings.h"

namespace ferry::sysmetrics {

namespace {

// The whitespace-separated fields of one line.
std::vector<std::string_view> Fields(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    size_t start = i;
    while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

template <typename F>
void ForEachLine(std::string_view text, F&& f) {
  while (!text.empty()) {
    size_t nl = text.find('\n');
    f(text.substr(0, nl));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
}

uint64_t Num(std::string_view s) { return ParseUint64(s).value_or(0); }

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

}  // namespace

Result<CpuTimes> ParseProcStat(std::string_view text) {
  std::optional<CpuTimes> found;
  ForEachLine(text, [&](std::string_view line) {
    if (found || !StartsWith(line, "cpu ")) return;
    auto f = Fields(line);
    if (f.size() < 5) return;
    // user nice system idle iowait irq softirq steal (guest time is already in user/nice).
    uint64_t v[8] = {0};
    for (size_t i = 0; i < 8 && i + 1 < f.size(); ++i) v[i] = Num(f[i + 1]);
    CpuTimes t;
    t.busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
    t.total = t.busy + v[3] + v[4];
    found = t;
  });
  if (!found) return InvalidArgument("/proc/stat: no aggregate 'cpu' line");
  return *found;
}

double CpuPercent(const CpuTimes& before, const CpuTimes& after) {
  if (after.total <= before.total || after.busy < before.busy) return 0;
  double pct = 100.0 * static_cast<double>(after.busy - before.busy) /
               static_cast<double>(after.total - before.total);
  return pct > 100 ? 100 : pct;
}

Result<MemInfo> ParseMeminfo(std::string_view text) {
  std::optional<uint64_t> total, available;
  uint64_t free = 0, buffers = 0, cached = 0;
  ForEachLine(text, [&](std::string_view line) {
    auto f = Fields(line);
    if (f.size() < 2) return;
    // Values are in kB (KiB) whatever the unit column says.
    uint64_t bytes = Num(f[1]) * 1024;
    if (f[0] == "MemTotal:") total = bytes;
    if (f[0] == "MemAvailable:") available = bytes;
    if (f[0] == "MemFree:") free = bytes;
    if (f[0] == "Buffers:") buffers = bytes;
    if (f[0] == "Cached:") cached = bytes;
  });
  if (!total) return InvalidArgument("/proc/meminfo: no MemTotal line");
  return MemInfo{.total = *total, .available = available.value_or(free + buffers + cached)};
}

bool IsWholeDisk(std::string_view name) {
  for (std::string_view skip : {"loop", "ram", "zram", "dm-", "md", "sr", "fd"}) {
    if (StartsWith(name, skip)) return false;
  }
  // nvme0n1p2, mmcblk0p1: a partition is 'p' + digits after a name ending in a digit.
  size_t p = name.rfind('p');
  if (p != std::string_view::npos && p > 0 && AllDigits(name.substr(p + 1)) &&
      std::isdigit(static_cast<unsigned char>(name[p - 1])) &&
      (StartsWith(name, "nvme") || StartsWith(name, "mmcblk"))) {
    return false;
  }
  if (StartsWith(name, "nvme") || StartsWith(name, "mmcblk")) return true;
  // sda1, vdb2, xvda1, hda3: letters then digits is a partition of the letters' disk.
  return name.empty() || !std::isdigit(static_cast<unsigned char>(name.back()));
}

DiskIo ParseDiskstats(std::string_view text) {
  DiskIo io;
  ForEachLine(text, [&](std::string_view line) {
    auto f = Fields(line);
    // major minor name reads merged sectors_read ms writes merged sectors_written ...
    if (f.size() < 10 || !IsWholeDisk(f[2])) return;
    io.read_bytes += Num(f[5]) * 512;
    io.write_bytes += Num(f[9]) * 512;
  });
  return io;
}

NetIo ParseNetDev(std::string_view text) {
  NetIo io;
  ForEachLine(text, [&](std::string_view line) {
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) return;  // the two header lines have '|' only
    std::string_view name = Trim(line.substr(0, colon));
    if (name == "lo") return;
    auto f = Fields(line.substr(colon + 1));
    // 8 receive columns (bytes first), then 8 transmit columns (bytes first).
    if (f.size() < 9) return;
    io.rx_bytes += Num(f[0]);
    io.tx_bytes += Num(f[8]);
  });
  return io;
}

}  // namespace ferry::sysmetrics
