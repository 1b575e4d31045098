#pragma once
// Internal to the copy engine: the shared state of one copy run and the per-object algorithm.

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/hash.h"
#include "base/mutex.h"
#include "base/thread_pool.h"
#include "storage/store.h"
#include "transfer/copy_options.h"
#include "transfer/progress.h"

namespace ferry::transfer {
class Journal;
}

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

  int part_threads = 1;  // the part pool's threads
};

// How one object ended. kLeftOut: the source was unstable
// (CopyOptions::leave_out_unstable_sources); CopyItem has recorded it in report.unstable.
// `crc32c`: the content's CRC32C when the copy or the skip check established it.
struct Outcome {
  enum Kind { kCopied, kSkipped, kLeftOut };
  Kind kind = kCopied;
  std::optional<uint32_t> crc32c;
};

// Waits for a set of part tasks; keeps the first failure.
class Latch final {
 public:
  explicit Latch(int pending) : pending_(pending) {}
  void Done(Status s) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    if (!s.ok() && first_error_.ok()) first_error_ = std::move(s);
    if (--pending_ == 0) cv_.NotifyAll();
  }
  Status Wait() EXCLUDES(mu_) {
    MutexLock lock(mu_);
    cv_.Wait(lock, [&]() REQUIRES(mu_) { return pending_ == 0; });
    return first_error_;
  }
  bool failed() const EXCLUDES(mu_) {
    MutexLock lock(mu_);
    return !first_error_.ok();
  }

 private:
  mutable Mutex mu_;
  CondVar cv_;
  int pending_ GUARDED_BY(mu_);
  Status first_error_ GUARDED_BY(mu_);
};

// An object copied in parts (CopyInParts in object_copy.cc), as its part tasks see it.
struct PartsJob {
  const Item& item;
  storage::PartWriter& writer;
  Journal* journal;                     // null: no journal
  const std::map<int, uint32_t>& done;  // parts an earlier run stored, with their CRC32Cs
  bool recheck;                         // those are read again and compared (a local source)
  uint64_t size, part_size;
  int count;
  std::vector<uint32_t>& crcs;  // each part's CRC32C, by part number - 1
  Latch& latch;                 // Done once per part sent or checked
  std::string src_url;

  uint64_t PartOffset(int n) const { return part_size * static_cast<uint64_t>(n - 1); }
  uint64_t PartLength(int n) const { return std::min(part_size, size - PartOffset(n)); }
};

// Reads [offset, offset+len) of the item's source into buf (If-Match on the listed etag),
// counting the bytes as progress; kDataLoss if fewer arrive.
Status ReadRange(RunContext& ctx, const Item& item, uint64_t offset, uint64_t len, std::string& buf,
                 storage::ObjectInfo* info);

// Part n, read into `data`: its CRC32C into job.crcs; a resumed part whose CRC matches the
// journal's is left as stored; else it is written (with its SHA-256 when given) and journaled.
Status SendPart(RunContext& ctx, PartsJob& job, int n, std::string_view data,
                const Sha256Digest* sha256);

// For a local source and a writer that sends each part with its SHA-256
// (PartWriter::wants_sha256): the calling thread reads the parts in order, four at a time, and
// hashes each four together right after reading them (four SHA-NI streams: base/sha256_lanes.h);
// the pool sends them; at most about ctx.part_threads + 4 parts are held. Calls job.latch.Done once
// per part to send or check, and returns when none is in flight any more.
void SendHashedParts(RunContext& ctx, PartsJob& job);

// Copies one object (skip check, server-side copy, whole or in parts, verification).
Result<Outcome> CopyItem(RunContext& ctx, const Item& item);

// fsyncs the directories in ctx.unsynced_dirs (all of them, or only once there are `at_least`),
// making the names of the files copied into them durable.
Status SyncDirectories(RunContext& ctx, size_t at_least = 0);

}  // namespace ferry::transfer::internal
