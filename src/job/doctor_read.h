#pragma once
// `ferry doctor`'s read probe: how fast existing files (objects) under a path or prefix can be
// read, without writing anything, so that read-only shares (a read-only NFS export or bind mount,
// an S3 prefix with read-only credentials) get a speed too.
//
// A bounded sample, read the way `ferry cp` reads (transfer::CopyOptions' default number of
// objects in flight, large objects in ranged parts of transfer::ChoosePartSize):
//  1. list at most `list_limit` objects or `list_seconds`;
//  2. small files (below `small_file_bytes`): up to `small_files`, spread evenly over the
//     listing, read whole in parallel for at most `small_seconds`: files per second;
//  3. the largest few (`large_files`): ranged parts in parallel, up to `large_bytes` or
//     `large_seconds`: MiB per second (local files: their cached pages are dropped first,
//     POSIX_FADV_DONTNEED, which changes nothing on disk).
// The report says how many files and bytes each rate comes from, and predicts how long
// `ferry cp` of the listed tree takes from the parallel rates (PredictCopySeconds).

#include <cstdint>
#include <optional>
#include <string>

#include "storage/store.h"

namespace ferry::job {

struct ReadProbeOptions {
  int concurrency = 0;  // objects (parts) in flight; 0 = ferry cp's default --transfers
  uint64_t list_limit = 20000;
  double list_seconds = 2;
  uint64_t small_file_bytes = 1ull << 20;  // smaller objects count as small files
  uint64_t small_files = 2000;
  double small_seconds = 2;
  int large_files = 4;
  uint64_t large_bytes = 256ull << 20;
  double large_seconds = 2;
};

struct ReadProbe {
  int concurrency = 0;        // objects or parts in flight in both measurements
  uint64_t listed_files = 0;  // objects listed
  uint64_t listed_bytes = 0;  // their bytes
  uint64_t listed_small_files = 0;
  uint64_t listed_large_bytes = 0;  // bytes of the listed objects that are not small files
  bool listing_complete = false;    // false: stopped at list_limit / list_seconds
  uint64_t small_files_read = 0, small_bytes_read = 0;
  double small_seconds = 0;
  double small_files_per_s = 0;  // 0 when no small file was read
  uint64_t large_files_read = 0, large_bytes_read = 0;
  double large_seconds = 0;
  double read_mib_s = 0;  // 0 when no large file was read
  // How long `ferry cp` of the listed objects would take, reading side (PredictCopySeconds);
  // absent when a needed rate is missing.
  std::optional<double> predicted_copy_seconds;
};

// Reads a sample under `key` of `store` (a directory prefix, or one object). Never writes.
// Errors (listing or reading fails) name the object and the cause.
Result<ReadProbe> ProbeReads(storage::Store& store, const std::string& key,
                             const ReadProbeOptions& options);

// Seconds to copy `small_files` small files at `files_per_s` plus `large_bytes` at `mib_s`
// (both measured in parallel). nullopt when there is work for a rate that is 0; a large-byte
// rate missing while small files were read is estimated from the small files' bytes/s.
std::optional<double> PredictCopySeconds(uint64_t small_files, uint64_t large_bytes,
                                         double files_per_s, double mib_s,
                                         double small_bytes_per_s = 0);

}  // namespace ferry::job
