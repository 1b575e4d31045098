#pragma once
// The copy engine behind `ferry cp`: any store to any store, one object or a whole tree.
//
// Semantics (docs/semantics/copy.md): never deletes at the destination; objects whose size and
// CRC32C already match are skipped; every object is written atomically (local temp + rename,
// S3 PUT or completed multipart upload); large objects move as parallel parts and resume from a
// journal after an interruption; the full-object CRC32C is stored as metadata on upload and
// verified on download.

#include "base/status.h"
#include "storage/registry.h"
#include "transfer/copy_options.h"
#include "transfer/progress.h"

namespace ferry::transfer {

// Copies `src` to `dst`. A destination that is a directory/prefix (trailing '/', empty key, or
// an existing local directory) receives the source's base name (single object) or the source's
// contents (recursive). Returns a report even when some objects failed; the status is the first
// failure.
struct CopyResult {
  CopyReport report;
  Status status;
  // The request itself cannot work, found before anything was copied: a directory without
  // recursive, a destination inside its source, an object copied onto itself. A CLI reports it
  // as a usage error.
  bool bad_request = false;
  // The copy stopped at a failure every other object would meet too (a missing bucket, refused
  // credentials): `status` says so; report.errors holds the same error for the few in flight.
  bool stopped = false;
};
CopyResult RunCopy(const storage::OpenedUrl& src, const storage::OpenedUrl& dst,
                   const CopyOptions& options, ProgressCounters& counters);

// Part size for an object: `requested` (or 8 MiB) rounded up to whole MiB and raised so the
// object needs at most 10,000 parts.
uint64_t ChoosePartSize(uint64_t object_size, uint64_t requested);

}  // namespace ferry::transfer
