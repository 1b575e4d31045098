#pragma once
// `ferry run`: wraps a training command so its results come back whenever that is possible.
// The contract is docs/semantics/run.md; the code is in phases, each a small tested unit:
//
//   run_plan.h      identity, destination templates, trigger file, the command's environment
//   lifecycle.h     preflight -> stage-in -> start -> supervise -> stop leftovers -> final
//                   stage-out -> exit status, against the interfaces of run_system.h
//   sync.h          one sync of the outputs (copy engine, manifest, latest pointer)
//   process_tree.h  what the command leaves running, and stopping it
//   trigger_file.h  the on-demand sync request file
//
// In short: stage-in (--in SRC=DIR, through the copy engine, unchanged files skipped), start the
// command in its own process group with FERRY_RUN_ID / FERRY_OUTPUT_<n> / FERRY_INPUT_<n> in its
// environment, sync every output directory to its destination every `interval` (files still
// being written are left for the next round) and on SIGUSR1 or the trigger file, then a final
// sync after the command ends: normal exit, non-zero exit, killed by a signal, or ferry itself
// receiving SIGTERM/SIGINT, which it forwards at once to the command's main process (its whole
// process group with `signal_group`; periodic syncs run beside the wait for signals and are
// stopped), waiting `grace` before SIGKILL to the group. A guard process (run_guard.h) stops the
// command the same way if ferry itself is killed. A stop signal before the
// command starts (preflight, stage-in) ends ferry without starting it; a second one stops the
// final sync. ferry is a child subreaper, so processes the command leaves running stay below it;
// they get SIGTERM when the command ends and SIGKILL after `grace`, before the final sync. After
// every sync a manifest is written last at each destination, then a `latest` pointer. ferry
// exits with the command's status (128+signal when it was killed by a signal), or 1 when the
// command exited 0 but the final stage-out failed or skipped files.

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/environment.h"
#include "base/status.h"
#include "job/preflight.h"
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
  // --resume: before the command starts, the job's newest complete checkpoint set (from an
  // earlier attempt) is copied here; the command is told through FERRY_RESUME_DIR and friends.
  // Empty = no resume.
  std::string resume_dir;
  // Where a stop signal to ferry (SIGTERM, SIGINT) goes. Default: SIGTERM to the command's main
  // process only, so the processes it started (DataLoader workers) keep serving while it saves;
  // the whole process group gets SIGKILL when `grace` ends. true: SIGTERM to the whole process
  // group (and to processes that left it) at once.
  bool signal_group = false;
  // --job NAME (spec: `job`): the job's identity, the same on every start of the job, so a
  // restart finds its records and checkpoints. Empty = from the environment (DetectIdentity).
  std::string job;
  // --track (spec: `track: URL` or `track: {url, experiment, run_name,
  // system_metrics_interval}`): the job as a run of an MLflow tracking server. RunJob does not
  // read it: the caller turns it into RunHooks (job/track/run_tracker.h). Empty url = none.
  struct Track {
    std::string url, experiment, run_name;
    std::optional<int> system_metrics_interval;  // seconds; 0 = off
  } track;
};

// What the destination template fields {job} {attempt} {rank} {host} {date} stand for
// (DetectIdentity in run_plan.h). `attempt` is empty until it is known: given by the scheduler,
// or counted from the job's records (job_records.h).
struct RunIdentity {
  std::string job, attempt, rank, host, date;
  // Where `job` came from ("--job", "FERRY_RUN_ID", "SLURM_JOB_ID", ...), and whether it is the
  // same when the job starts again (a generated id or a Kubernetes pod's name is not).
  std::string job_from;
  bool job_stable = true;
};

// How a run ended. `error` is set when ferry fails on its own account, before or after the
// command (exit 2: a usage error such as an unknown template field; exit 1: a failed preflight or
// stage-in, a command that cannot be started, a command that succeeded while its results did not
// reach their destination); the caller prints it. Otherwise `exit_code` is the command's status
// (128+signal when a signal killed it) or 128+signal of a stop signal that ended the run before
// the command started or during the final stage-out (logged as it happened).
struct RunOutcome {
  int exit_code = 0;
  Status error;
};

// Shown the preflight's findings (`ok`: whether the run goes on) before anything else happens.
using PreflightObserver = std::function<void(const PreflightReport& report, bool ok)>;

// What ferry run did on its own account, as it happens (on the thread that did it): each input
// staged in, and each output synced. The CLI prints one summary line per event (JSON with
// --json).
struct RunEvent {
  enum class Kind { kStageIn, kSync };
  Kind kind = Kind::kSync;
  std::string sync_kind;  // kSync: "periodic", "on-demand" or "final"
  std::string src, dst;   // kStageIn: URL -> local dir; kSync: local dir -> URL
  uint64_t files_copied = 0, files_unchanged = 0, bytes_copied = 0;
  size_t left_out = 0;  // kSync: files that changed while being uploaded (the next sync retries)
  double seconds = 0;
  Status status;  // the failure, when it failed (also logged as an error line)
};
using RunEventObserver = std::function<void(const RunEvent& event)>;

class RunHooks;

// Runs the job: the phases of lifecycle.h on the real system (run_system_posix.h) and stores.
// The preflight names the credentials of each s3:// URL (Store::Describe()). `hooks` (may be
// null, not owned) adds to the run (run_hooks.h: ferry run --track). `on_event` (may be empty)
// is told about each stage-in and sync. `progress_lines`: long stage-ins and syncs print a
// progress line every 10 s on stderr.
RunOutcome RunJob(const RunOptions& options, storage::StoreRegistry& registry,
                  const Environment& env, const PreflightObserver& on_preflight,
                  RunHooks* hooks = nullptr, const RunEventObserver& on_event = {},
                  bool progress_lines = false);

}  // namespace ferry::job
