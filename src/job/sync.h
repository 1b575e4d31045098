#pragma once
// One checkpoint sync of `ferry run` (periodic, on demand, or final): copy an output directory to
// its destination through the copy engine, write the manifest (manifest.h) last, listing exactly
// the files this sync uploaded or verified, then point the job's `latest` pointer at it, then (with
// --delete-after-upload) remove local files whose upload is verified. Each step starts only when
// the one before it succeeded, so a reader that trusts the manifest and the pointer never sees a
// partial checkpoint set.
//
// A file that changes, vanishes or cannot be read while it is being uploaded does not fail the
// sync: the copy engine leaves it out (the destination keeps what it had, nothing torn is
// committed), the manifest lists it under "skipped" with the reason, and the next sync tries it
// again. Every other file is uploaded.

#include <sys/types.h>

#include <atomic>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "job/manifest.h"
#include "job/run.h"
#include "storage/registry.h"

namespace ferry::job {

struct Output {
  std::string dir;           // local directory (absolute)
  std::string url;           // expanded destination
  std::string tmpl;          // the destination as written, with {fields}
  std::string records_key;   // the job's records in the destination's store (job_records.h)
  std::string pointer_name;  // this output's latest pointer there (LatestPointerName)
};

// What a run remembers between the syncs of one output: files it uploaded and then deleted
// locally (--delete-after-upload). They stay in its manifests: the destination holds them.
struct OutputHistory {
  std::map<std::string, ManifestFile> kept;  // by path
};

// What every sync of a run shares.
struct SyncContext {
  const RunIdentity& id;
  const RunOptions& options;
  const ChildState& child;
  const std::optional<ResumeSource>& resumed_from;
};

// Periodic syncs leave files modified in the last 2 s for the next round (they may still be
// open); on-demand syncs (SIGUSR1, the trigger file) and the final one take everything.
enum class SyncKind { kPeriodic, kOnDemand, kFinal };

// What one output's sync moved (SyncOutput fills it when given), for the user's summary line.
struct OutputSyncReport {
  std::string dir, url;
  uint64_t uploaded = 0, unchanged = 0, bytes_uploaded = 0;
  size_t left_out = 0;
  double seconds = 0;
  Status status;  // the sync's failure, if any
};

// Syncs one output. Returns the files it left out (sorted by path; the manifest was written);
// an error when the sync as a whole failed (listing, an upload the destination refused, the
// manifest): then no manifest was written.
// `cancel` (may be null), once set, stops the sync within about a second with kCancelled and
// no manifest (a periodic sync overtaken by the command's end, or a second stop signal).
// `report` (may be null) gets the copy's counts; `progress_lines`: a progress line on stderr
// every 10 s while it lasts.
Result<std::vector<SkippedFile>> SyncOutput(storage::StoreRegistry& registry, const Output& out,
                                            SyncKind kind, const SyncContext& ctx,
                                            OutputHistory& history,
                                            const std::atomic<bool>* cancel = nullptr,
                                            OutputSyncReport* report = nullptr,
                                            bool progress_lines = false);

// One sync of every output.
struct SyncRound {
  Status status;              // the first output whose sync failed (all outputs are tried)
  size_t skipped = 0;         // files left out by the syncs that succeeded
  std::string first_skipped;  // "'DIR/PATH' (REASON)"
  std::vector<OutputSyncReport> outputs;  // one per output tried, in order

  // The round as one status: failed, or OK but with files left out (named), or OK.
  Status AsStatus() const;
};

// Syncs every output in turn and logs how each went. A failed output does not stop the others;
// a cancelled one (`cancel` set) ends the round with kCancelled.
// `history` has one entry per output.
SyncRound SyncAllOutputs(storage::StoreRegistry& registry, const std::vector<Output>& outputs,
                         SyncKind kind, const SyncContext& ctx, std::vector<OutputHistory>& history,
                         const std::atomic<bool>* cancel, bool progress_lines = false);

}  // namespace ferry::job
