#pragma once
// Options and results of the copy engine (ferry cp).

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "storage/store.h"

namespace ferry::transfer {

struct CopyOptions {
  bool recursive = false;
  std::vector<std::string> include;  // glob patterns; empty = everything
  std::vector<std::string> exclude;  // glob patterns; win over include
  int transfers = 16;                // objects in flight
  // Parts of large objects in flight, all objects together; 0 = automatic: 16 when writing to a
  // remote store (RGW ingests more parallel parts faster), 8 when writing to local disk (more
  // parallel ranged GETs slowed a 4 GiB download). See docs/benchmarks.md.
  int part_concurrency = 0;
  uint64_t part_size = 0;              // 0 = automatic (8 MiB, more to stay within 10,000 parts)
  uint64_t max_memory = 512ull << 20;  // bytes held in part and small-object buffers
  bool verify = false;                 // re-read every written object and compare its CRC32C
  uint64_t bwlimit = 0;                // bytes per second across the copy; 0 = unlimited
  std::string state_dir;       // resume journals; "" = $FERRY_STATE_DIR or ~/.local/state/ferry
  bool skip_unchanged = true;  // skip objects whose size and checksum already match
  // Leave out source objects modified less than this long ago (files still being written by a
  // running job; ferry run's periodic syncs). 0 = copy everything.
  std::chrono::seconds min_age{0};
  // Local sources: follow every symbolic link, also out of the source tree (ferry cp -L). By
  // default links leading out of the tree, links to directories and loops are left out and
  // reported (CopyReport::left_out); docs/semantics/copy.md has the rule.
  bool follow_symlinks = false;
  const std::atomic<bool>* cancel = nullptr;  // set (e.g. by SIGINT) to stop; state is kept
  // Fill CopyReport::in_sync with every source object that is now at the destination with
  // verified content (copied or found unchanged); ferry run's manifests and
  // --delete-after-upload use it.
  bool report_in_sync = false;
  // A source object that changes, vanishes or cannot be read while it is being copied is left
  // out instead of failing the copy: it is listed in CopyReport::unstable with the reason, and
  // the destination keeps what it had (nothing half-written becomes visible). The status stays
  // OK when nothing else failed. ferry run's syncs use it (the next sync retries the file).
  bool leave_out_unstable_sources = false;
};

// A source object left out by CopyOptions::leave_out_unstable_sources.
struct UnstableSource {
  std::string key;     // source key
  std::string reason;  // "changed while being copied", "vanished while being copied",
                       // "cannot be read: <error>"
};

// A source object the destination now holds (CopyOptions::report_in_sync).
struct InSyncObject {
  storage::ObjectInfo src;  // key, size, modified as listed before the copy
  std::string dst_key;
  bool copied = false;             // false: found unchanged
  std::optional<uint32_t> crc32c;  // the content's CRC32C when the copy or skip check had it
};

struct CopyReport {
  uint64_t files_total = 0, files_copied = 0, files_skipped = 0, files_failed = 0;
  uint64_t bytes_total = 0, bytes_copied = 0, bytes_skipped = 0, bytes_resumed = 0;
  uint64_t retries = 0, verified = 0, unverified = 0, server_side = 0;
  uint64_t peak_buffer_bytes = 0;
  double seconds = 0;
  std::vector<std::string> errors;  // one line each, the first 20
  // Source entries the listing left out (links out of the tree, loops, special files): the first
  // kMaxLeftOut, and how many there were.
  static constexpr size_t kMaxLeftOut = 10000;
  std::vector<storage::SkippedEntry> left_out;
  uint64_t left_out_count = 0;
  // With CopyOptions::report_in_sync: source objects whose destination now holds the same bytes.
  std::vector<InSyncObject> in_sync;
  // With CopyOptions::leave_out_unstable_sources: the objects left out (not counted as failed).
  std::vector<UnstableSource> unstable;
};

// The metadata key holding an object's CRC32C (8 hex digits); S3 sends it as
// x-amz-meta-ferry-crc32c, local files keep it in the user.ferry-crc32c xattr.
inline constexpr const char* kCrcMetadataKey = "ferry-crc32c";

}  // namespace ferry::transfer
