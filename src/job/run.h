#pragma once
// `ferry run`: wraps a training command so its results come back whenever that is possible.
//
// Lifecycle: stage-in (--in SRC=DIR, through the copy engine, unchanged files skipped), start the
// command in its own process group with FERRY_RUN_ID / FERRY_OUTPUT_<n> / FERRY_INPUT_<n> in its
// environment, sync every output directory to its destination every `interval` (files still
// being written are left for the next round) and on SIGUSR1, then a final sync after the command
// ends: normal exit, non-zero exit, killed by a signal, or ferry itself receiving SIGTERM/SIGINT,
// which it forwards to the command at once (periodic syncs run on their own thread and are
// stopped), waiting `grace` before SIGKILL. A stop signal before the command starts (preflight,
// stage-in) ends ferry within about a second without starting it; a second one stops the final
// sync. ferry is a child subreaper,
// so processes the command leaves running (setsid, daemons, background jobs) stay below it; they
// get SIGTERM when the command ends and SIGKILL after `grace`, before the final sync (see
// process_tree.h). Files that change while being uploaded are skipped and listed in the
// manifest; the next sync retries them (sync.h). After every sync a manifest
// (`_ferry/manifest.json`: files, sizes, ETags, run id, host, command, exit status when known) is
// written last at each destination, so a reader can tell a complete checkpoint set from a partial
// one, and a `latest` pointer names the newest complete set. ferry exits with the command's status
// (128+signal when it was killed by a signal), or 1 when the command exited 0 but the final
// stage-out failed or skipped files.

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "base/environment.h"
#include "storage/registry.h"

namespace ferry::job {

struct RunOptions {
  std::vector<std::pair<std::string, std::string>> inputs;   // SRC URL -> local dir
  std::vector<std::pair<std::string, std::string>> outputs;  // local dir -> DST URL template
  std::chrono::seconds interval{300};
  std::chrono::seconds grace{30};
  bool strict = false;  // preflight warnings are fatal too
  // Syncs follow every symbolic link in an output directory, also out of it (ferry cp -L);
  // default: ferry cp's link rule (links out of the directory are never uploaded).
  bool follow_symlinks = false;
  bool skip_preflight = false;
  // Globs (relative paths, like --include): local output files matching one are deleted once a
  // sync has verified them at the destination and they have not changed since.
  std::vector<std::string> delete_after_upload;
  // Creating this file asks for a sync now; ferry removes it when that sync has finished.
  // Empty = $TMPDIR/ferry-sync-<pid>. The command sees it as FERRY_SYNC_TRIGGER.
  std::string trigger_file;
  std::vector<std::string> command;
};

// Expands {job} {attempt} {rank} {host} {date} in a destination template.
struct RunIdentity {
  std::string job, attempt, rank, host, date;
};
RunIdentity DetectIdentity(const Environment& env);
Result<std::string> ExpandTemplate(const std::string& tmpl, const RunIdentity& id);

// Runs the job; returns the exit code ferry should exit with. The preflight block names the
// credentials of each s3:// URL (Store::Describe()).
int RunJob(const RunOptions& options, storage::StoreRegistry& registry, const Environment& env);

}  // namespace ferry::job
