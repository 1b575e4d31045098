#pragma once
// One checkpoint sync of `ferry run` (periodic, on demand, or final): copy an output directory to
// its destination through the copy engine, write `_ferry/manifest.json` last, then point the
// `latest` pointer at it, then (with --delete-after-upload) remove local files whose upload is
// verified. Each step starts only when the one before it succeeded, so a reader that trusts the
// manifest and the pointer never sees a partial checkpoint set.
//
// A file that changes, vanishes or cannot be read while it is being uploaded does not fail the
// sync: the copy engine leaves it out (the destination keeps what it had, nothing torn is
// committed), the manifest lists it under "skipped" with the reason, and the next sync tries it
// again. Every other file is uploaded.

#include <sys/types.h>

#include <atomic>
#include <string>
#include <vector>

#include "base/status.h"
#include "job/run.h"
#include "storage/registry.h"

namespace ferry::job {

struct Output {
  std::string dir;   // local directory (absolute)
  std::string url;   // expanded destination
  std::string tmpl;  // the destination as written, with {fields}
};

// The command as the manifest reports it.
struct ChildState {
  pid_t pid = -1;
  bool running = false;
  int exit_code = -1;  // 0-255, or 128+signal
  std::string how;     // "exited 3", "killed by signal 9"
};

// Where the latest pointer of `out` lives: `_ferry/latest.json` (rank 0) or
// `_ferry/latest-rank<N>.json` under the template's literal part, i.e. the directory above the
// first {field} ("s3://b/runs/{job}/{attempt}/" -> "s3://b/runs/"); the destination itself
// when the template has no fields. Returned as a key of the destination's store.
Result<std::string> LatestPointerKey(const std::string& tmpl, const std::string& rank);

// Periodic syncs leave files modified in the last 2 s for the next round (they may still be
// open); on-demand syncs (SIGUSR1, the trigger file) and the final one take everything.
enum class SyncKind { kPeriodic, kOnDemand, kFinal };

// A file a sync left out, as listed under "skipped" in the manifest.
struct SkippedFile {
  std::string path;    // relative to the output directory
  std::string reason;  // "changed while being copied", "vanished ...", "cannot be read: ..."
};

// Syncs one output. Returns the files it left out (sorted by path; the manifest was written);
// an error when the sync as a whole failed (listing, an upload the destination refused, the
// manifest): then no manifest was written.
// `cancel` (may be null), once set, stops the sync within about a second with kCancelled and
// no manifest (a periodic sync overtaken by the command's end, or a second stop signal).
Result<std::vector<SkippedFile>> SyncOutput(storage::StoreRegistry& registry, const Output& out,
                                            SyncKind kind, const RunIdentity& id,
                                            const RunOptions& options, const ChildState& child,
                                            const std::atomic<bool>* cancel = nullptr);

// One sync of every output.
struct SyncRound {
  Status status;              // the first output whose sync failed (all outputs are tried)
  size_t skipped = 0;         // files left out by the syncs that succeeded
  std::string first_skipped;  // "'DIR/PATH' (REASON)"

  // The round as one status: failed, or OK but with files left out (named), or OK.
  Status AsStatus() const;
};

// Syncs every output in turn and logs how each went. A failed output does not stop the others;
// a cancelled one (`cancel` set) ends the round with kCancelled.
SyncRound SyncAllOutputs(storage::StoreRegistry& registry, const std::vector<Output>& outputs,
                         SyncKind kind, const RunIdentity& id, const RunOptions& options,
                         const ChildState& child, const std::atomic<bool>* cancel);

}  // namespace ferry::job
