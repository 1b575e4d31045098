#pragma once
// What `ferry run` decides before anything runs: the run's identity ({job} {attempt} {rank}
// {host} {date}), the expanded destinations, the trigger file, and the environment the command
// gets. Pure functions of the options and the environment (plus the clock and host name for the
// identity), so every rule is unit-tested.

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

#include "base/environment.h"
#include "base/status.h"
#include "job/run.h"
#include "job/sync.h"

namespace ferry::job {

// {job}: FERRY_RUN_ID, SLURM_JOB_ID, TORCHELASTIC_RUN_ID, JOB_ID, the pod name under Kubernetes,
// else a generated YYYYmmdd-HHMMSS-xxxxxx; {attempt}: SLURM_RESTART_COUNT,
// TORCHELASTIC_RESTART_COUNT, else 0; {rank}: RANK, SLURM_PROCID, else 0.
RunIdentity DetectIdentity(const Environment& env);

// Expands {job} {attempt} {rank} {host} {date} in a destination template; any other field is
// kInvalidArgument.
Result<std::string> ExpandTemplate(const std::string& tmpl, const RunIdentity& id);

struct RunPlan {
  RunOptions options;  // trigger_file filled in (default $TMPDIR/ferry-sync-<pid>) and absolute
  RunIdentity id;
  std::vector<Output> outputs;  // dirs absolute, destinations expanded
};

// Errors are the user's (an unknown template field): a usage error.
Result<RunPlan> PlanRun(const RunOptions& options, const Environment& env, pid_t pid);

// What the command finds in its environment besides ferry's own: FERRY_RUN_ID, FERRY_OUTPUT,
// FERRY_OUTPUT_<n>, FERRY_OUTPUT_URL_<n>, FERRY_INPUT_<n>, FERRY_SYNC_TRIGGER.
std::vector<std::pair<std::string, std::string>> CommandEnvironment(const RunPlan& plan);

}  // namespace ferry::job
