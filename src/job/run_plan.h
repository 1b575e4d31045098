#pragma once
// What `ferry run` decides before anything runs: the run's identity ({job} {attempt} {rank}
// {host} {date}), the expanded destinations, the trigger file, and the environment the command
// gets. Pure functions of the options and the environment (plus the clock and host name for the
// identity), so every rule is unit-tested.

#include <sys/types.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/environment.h"
#include "base/status.h"
#include "job/run.h"
#include "job/sync.h"

namespace ferry::job {

// {job}: FERRY_RUN_ID, SLURM_JOB_ID, TORCHELASTIC_RUN_ID, JOB_ID, the pod name under Kubernetes
// (not stable: a Job's retried pod has another), else a generated YYYYmmdd-HHMMSS-xxxxxx (not
// stable); PlanRun puts --job first; {attempt}: SLURM_RESTART_COUNT,
// TORCHELASTIC_RESTART_COUNT, else empty (counted later: AssignAttempt); {rank}: RANK,
// SLURM_PROCID, else 0.
RunIdentity DetectIdentity(const Environment& env);

// Expands {job} {attempt} {rank} {host} {date} in a destination template; any other field is
// kInvalidArgument.
Result<std::string> ExpandTemplate(const std::string& tmpl, const RunIdentity& id);

struct RunPlan {
  RunOptions options;  // trigger_file filled in (default $TMPDIR/ferry-sync-<pid>) and absolute
  RunIdentity id;
  // Dirs absolute, records located; destinations expanded once the attempt is known (url empty
  // before).
  std::vector<Output> outputs;
  // --resume: the output whose checkpoints are resumed (the one whose directory is the resume
  // directory, else the first); what was found there, once the resume phase has run.
  size_t resume_output = 0;
  std::optional<ResumeSource> resumed_from;
  // Added to the command's environment after ferry's own (RunWork::ExtraEnvironment).
  std::vector<std::pair<std::string, std::string>> extra_env;
  std::string tmpdir;  // the command's TMPDIR ("/tmp" when unset)
};

// A job name as --job takes it: 1-128 of [A-Za-z0-9._-], starting with a letter or digit (it
// becomes part of destination paths); kInvalidArgument naming the name otherwise.
Status CheckJobName(const std::string& name);

// The preflight warning of `--resume` without a stable job identity (a restart would get another
// id and start over instead of resuming); nullopt when there is nothing to say.
std::optional<std::string> UnstableResumeWarning(const RunPlan& plan);

// Errors are the user's (an unknown template field, --resume without an output): a usage error.
Result<RunPlan> PlanRun(const RunOptions& options, const Environment& env, pid_t pid);

// Whether this run's attempt still has to be counted (no scheduler told it, and there is an
// output whose destination holds the job's records).
bool NeedsAttemptCount(const RunPlan& plan);

// Whether the attempt names anything: a destination template uses {attempt}, or --resume.
bool AttemptMatters(const RunPlan& plan);

// Sets the attempt (when it was counted) and expands every destination.
Status AssignAttempt(RunPlan& plan, std::optional<int> counted);

// What the command finds in its environment besides ferry's own: FERRY_RUN_ID, FERRY_ATTEMPT,
// FERRY_RANK, FERRY_OUTPUT, FERRY_OUTPUT_<n>, FERRY_OUTPUT_URL_<n>, FERRY_INPUT_<n>,
// FERRY_SYNC_TRIGGER; with --resume FERRY_RESUME_DIR and FERRY_RESUMED (1 or 0), and when a set
// was resumed FERRY_RESUME_ATTEMPT and FERRY_RESUME_MANIFEST; then `plan.extra_env`.
std::vector<std::pair<std::string, std::string>> CommandEnvironment(const RunPlan& plan);

}  // namespace ferry::job
