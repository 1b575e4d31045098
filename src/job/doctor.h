#pragma once
// `ferry doctor PATH`: where a path really lives (its mount and what that means for the data)
// and how fast it is for small files and sequential I/O.

#include <cstdint>
#include <optional>
#include <string>

#include "base/status.h"
#include "job/mountinfo.h"

namespace ferry::job {

struct PathMeasurements {
  double small_file_ops_per_s = 0;  // create+write 4 KiB+stat+read+delete cycles per second
  double seq_write_mib_s = 0;       // 64 MiB written and fsynced
  double seq_read_mib_s = 0;        // read back (page cache may help)
};

struct PathDiagnosis {
  std::string path;  // as resolved (absolute, symlinks followed)
  MountEntry mount;
  MountVerdict verdict;
  uint64_t free_bytes = 0, total_bytes = 0;
  std::optional<PathMeasurements> measured;  // absent with --no-bench or when not writable
  std::string measure_error;
};

struct DoctorOptions {
  bool measure = true;
  int small_files = 1000;
  uint64_t seq_bytes = 64ull << 20;
};

Result<PathDiagnosis> DiagnosePath(const std::string& path, const DoctorOptions& options);

}  // namespace ferry::job
