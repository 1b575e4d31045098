#pragma once
// What a caller of RunJob (run.h) may add to a run without the job module knowing about it:
// `ferry run --track` (job/track) creates a tracking run, gives the command its variables, keeps
// the command's output, and registers each sync's checkpoints. Every hook must return promptly
// and never fail the run: what goes wrong in them is theirs to log.

#include <string>
#include <utility>
#include <vector>

#include "job/manifest.h"
#include "job/output_tee.h"
#include "job/run_plan.h"
#include "job/sync.h"

namespace ferry::job {

class RunHooks {
 public:
  virtual ~RunHooks() = default;

  // Called once the preflight, resume and stage-in have passed, just before the command starts
  // (its attempt known, its destinations expanded). Returns variables to add to the command's
  // environment (they override ferry's environment, not FERRY_*).
  virtual std::vector<std::pair<std::string, std::string>> BeforeStart(const RunPlan& plan) = 0;

  // Where a copy of the command's stdout and stderr goes (output_tee.h); null = not captured.
  virtual OutputSink* output_sink() = 0;

  // After every sync of the outputs (periodic, on demand, final), on the sync's thread, with the
  // plan it synced and how it went.
  virtual void AfterSync(const RunPlan& plan, SyncKind kind, const SyncRound& round) = 0;

  // Once the run is over, with the command's state (pid -1: it never started) and ferry's exit
  // code; the captured output is complete by then.
  virtual void Ended(const ChildState& child, int exit_code) = 0;
};

}  // namespace ferry::job
