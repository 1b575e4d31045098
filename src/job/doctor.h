#pragma once
// `ferry doctor PATH`: where a path really lives (its mount and what that means for the data)
// and how fast it is for small files and sequential I/O.

#include <cstdint>
#include <optional>
#include <string>

#include "base/status.h"
#include "job/doctor_read.h"
#include "job/mountinfo.h"
#include "storage/store.h"

namespace ferry::job {

// The write test, in a private scratch directory (only where the path is writable).
struct PathMeasurements {
  // create+write 4 KiB+stat+read+delete cycles per second, one at a time (serial): the cost of
  // one file, not what `ferry cp` reaches with many in flight (PathDiagnosis::read has that).
  double small_file_ops_per_s = 0;
  double seq_write_mib_s = 0;  // 64 MiB written and fsynced
  double seq_read_mib_s = 0;   // read back (page cache may help)
};

struct PathDiagnosis {
  std::string path;  // as resolved (absolute, symlinks followed)
  MountEntry mount;
  MountVerdict verdict;
  uint64_t free_bytes = 0, total_bytes = 0;
  std::optional<PathMeasurements> measured;  // absent with --no-bench or when not writable
  std::string measure_error;  // why the write test did not run (a read-only path: EROFS)
  // Reading the files already there, never writing (doctor_read.h): also on read-only paths.
  std::optional<ReadProbe> read;  // absent with --no-bench, without a store, or on error
  std::string read_error;
};

struct DoctorOptions {
  bool measure = true;
  int small_files = 1000;
  uint64_t seq_bytes = 64ull << 20;
  // The path opened as a store (file://) and its key: measure reads its existing files
  // (ProbeReads). Null: no read probe (ferry run's preflight).
  storage::Store* store = nullptr;
  std::string key;
  ReadProbeOptions read;
};

Result<PathDiagnosis> DiagnosePath(const std::string& path, const DoctorOptions& options);

}  // namespace ferry::job
