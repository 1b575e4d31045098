#include "sysmetrics/proc_parsers.h"

#include <gtest/gtest.h>

namespace ferry::sysmetrics {
namespace {

constexpr char kStat[] =
    "cpu  100 10 50 800 40 5 5 0 0 0\n"
    "cpu0 50 5 25 400 20 2 3 0 0 0\n"
    "intr 12345\n";

TEST(ProcParsersTest, ProcStatSumsBusyAndIdleTicks) {
  auto t = ParseProcStat(kStat);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->busy, 100u + 10 + 50 + 5 + 5);
  EXPECT_EQ(t->total, t->busy + 800 + 40);
}

TEST(ProcParsersTest, ProcStatWithoutCpuLineIsAnError) {
  auto t = ParseProcStat("intr 1\n");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("/proc/stat"), std::string::npos);
}

TEST(ProcParsersTest, CpuPercentBetweenTwoReadings) {
  EXPECT_DOUBLE_EQ(CpuPercent({.busy = 100, .total = 1000}, {.busy = 150, .total = 1100}), 50.0);
  EXPECT_DOUBLE_EQ(CpuPercent({.busy = 100, .total = 1000}, {.busy = 100, .total = 1000}), 0.0);
  // Counters that went backwards (a wrapped or reset reading) give 0, never garbage.
  EXPECT_DOUBLE_EQ(CpuPercent({.busy = 100, .total = 1000}, {.busy = 50, .total = 900}), 0.0);
}

TEST(ProcParsersTest, MeminfoUsesMemAvailable) {
  auto m = ParseMeminfo(
      "MemTotal:       16000000 kB\nMemFree:         1000000 kB\n"
      "MemAvailable:    4000000 kB\nBuffers:          100 kB\n");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->total, 16000000ull * 1024);
  EXPECT_EQ(m->used(), 12000000ull * 1024);
}

TEST(ProcParsersTest, MeminfoOfAnOldKernelFallsBackToFreeBuffersCached) {
  auto m = ParseMeminfo("MemTotal: 1000 kB\nMemFree: 100 kB\nBuffers: 50 kB\nCached: 250 kB\n");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->available, 400ull * 1024);
  EXPECT_FALSE(ParseMeminfo("MemFree: 1 kB\n").ok());
}

TEST(ProcParsersTest, DiskstatsCountsWholeDisksOnly) {
  constexpr char kDisk[] =
      "   8       0 sda 100 0 2000 10 50 0 4000 20 0 30 30 0 0 0 0\n"
      "   8       1 sda1 90 0 1800 10 40 0 3000 20 0 30 30 0 0 0 0\n"
      " 259       0 nvme0n1 10 0 100 1 5 0 200 1 0 1 1\n"
      " 259       1 nvme0n1p1 10 0 100 1 5 0 200 1 0 1 1\n"
      " 253       0 dm-0 10 0 999 1 5 0 999 1 0 1 1\n"
      "   7       0 loop0 10 0 999 1 5 0 999 1 0 1 1\n";
  DiskIo io = ParseDiskstats(kDisk);
  EXPECT_EQ(io.read_bytes, (2000u + 100) * 512);
  EXPECT_EQ(io.write_bytes, (4000u + 200) * 512);
}

TEST(ProcParsersTest, WholeDiskNames) {
  for (const char* n : {"sda", "vdb", "xvda", "nvme0n1", "nvme12n3", "mmcblk0"}) {
    EXPECT_TRUE(IsWholeDisk(n)) << n;
  }
  for (const char* n :
       {"sda1", "vdb2", "nvme0n1p1", "mmcblk0p2", "dm-1", "md0", "loop3", "ram0", "zram0", "sr0"}) {
    EXPECT_FALSE(IsWholeDisk(n)) << n;
  }
}

TEST(ProcParsersTest, NetDevSkipsLoopback) {
  constexpr char kNet[] =
      "Inter-|   Receive                                                |  Transmit\n"
      " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs "
      "drop fifo colls carrier compressed\n"
      "    lo: 5000      50    0    0    0     0          0         0     5000      50    0    0 "
      "   0     0       0          0\n"
      "  eth0: 1000000  900    0    0    0     0          0         0   250000     800    0    0 "
      "   0     0       0          0\n"
      "  eth1:500 5 0 0 0 0 0 0 700 7 0 0 0 0 0 0\n";
  NetIo io = ParseNetDev(kNet);
  EXPECT_EQ(io.rx_bytes, 1000500u);
  EXPECT_EQ(io.tx_bytes, 250700u);
}

}  // namespace
}  // namespace ferry::sysmetrics
