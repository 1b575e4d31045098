#pragma once
// How a large object copy starts: resuming an unfinished part write from its journal, or fresh.
//
// The decision, step by step:
//  1. Load the journal for (source URL, destination URL). None: start fresh. One without a
//     token (a run killed between its intent and the destination's answer) may have left a part
//     write nobody can name: the destination's unfinished writes to the key begun since the
//     intent (less 5 minutes for clock skew) are discarded (Store::AbortPartWritesSince), then
//     the copy starts fresh.
//  2. A journal for another version of the source (size, ETag, part size) is useless: its
//     unfinished write is discarded at the destination (Store::AbortPartWrite) and the copy
//     starts fresh.
//  3. Otherwise reopen the destination's part write by the journal's resume token. If the
//     destination no longer knows it (the upload expired, the temp file is gone), discard it
//     and start fresh.
//  4. Keep only the journal's parts the destination still has (PartWriter::StoredParts, where
//     the backend can list them) and, where it can read unfinished parts back
//     (PartWriter::StoredCrc32c), only those whose stored bytes still have the journal's CRC.
//  5. Fresh starts write the journal's intent (header, start time) before the destination
//     begins the write, and its token right after; a journal that cannot be written is a
//     warning (the copy works, it just cannot resume).

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "base/status.h"
#include "storage/store.h"
#include "transfer/journal.h"

namespace ferry::transfer {

struct ResumeRequest {
  storage::Store* dst = nullptr;  // required
  std::string dst_key;
  JournalHeader header;  // source, destination, size, version, part size (token is filled in)
  std::string journal_path;
  storage::PartWriteOptions write;  // size, part size, metadata; resume_token is filled in
};

struct ResumePlan {
  std::unique_ptr<storage::PartWriter> writer;
  std::unique_ptr<Journal> journal;  // null when no journal could be written
  std::map<int, uint32_t> done;      // parts already at the destination: number -> CRC32C
  uint64_t resumed_bytes = 0;        // their bytes
};

// Fails only when the destination cannot start a part write at all.
Result<ResumePlan> PlanResume(const ResumeRequest& request);

}  // namespace ferry::transfer
