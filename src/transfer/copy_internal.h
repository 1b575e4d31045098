#pragma once
// Internal to the copy engine: the shared state of one copy run and the per-object algorithm.

#include <atomic>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "base/mutex.h"
#include "base/thread_pool.h"
#include "storage/store.h"
#include "transfer/copy_options.h"
#include "transfer/progress.h"

namespace ferry::transfer::internal {

struct Item {
  std::string src_key, dst_key;
  storage::ObjectInfo src;                 // from the listing or Stat (no metadata)
  std::optional<storage::ObjectInfo> dst;  // what the destination listing found
};

struct RunContext {
  std::shared_ptr<storage::Store> src_store, dst_store;
  const CopyOptions& options;
  ProgressCounters& counters;
  ThreadPool& part_pool;
  ByteSemaphore& memory;
  RateLimiter& limiter;
  std::string state_dir;
  storage::Capabilities src_caps, dst_caps;  // what the two stores report, asked once

  Mutex mu;
  CopyReport report GUARDED_BY(mu);  // counts only; bytes are atomics in counters
  std::atomic<uint64_t> bytes_resumed{0}, verified{0}, unverified{0}, server_side{0};
  // Local destination directories holding files renamed into place whose directory has not been
  // fsynced yet (one fsync per directory instead of one per file; SyncDirectories).
  std::set<std::string> unsynced_dirs GUARDED_BY(mu);

  // Set by the first failure every other object would meet too (StopsTheCopy in
  // copy_engine.cc): no further object starts and the listing ends.
  std::atomic<bool> stop{false};

  bool cancelled() const { return options.cancel && options.cancel->load(); }
};

// How one object ended. kLeftOut: the source was unstable
// (CopyOptions::leave_out_unstable_sources); CopyItem has recorded it in report.unstable.
// `crc32c`: the content's CRC32C when the copy or the skip check established it.
struct Outcome {
  enum Kind { kCopied, kSkipped, kLeftOut };
  Kind kind = kCopied;
  std::optional<uint32_t> crc32c;
};

// Copies one object (skip check, server-side copy, whole or in parts, verification).
Result<Outcome> CopyItem(RunContext& ctx, const Item& item);

// fsyncs the directories in ctx.unsynced_dirs (all of them, or only once there are `at_least`),
// making the names of the files copied into them durable.
Status SyncDirectories(RunContext& ctx, size_t at_least = 0);

}  // namespace ferry::transfer::internal
