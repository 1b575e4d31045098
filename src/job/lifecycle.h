#pragma once
// The phases of `ferry run` (docs/semantics/run.md), in order:
//
//   Identify       the attempt, counted from the job's records unless the scheduler gave it
//                  (job_records.h); the destinations expanded. When it cannot be counted and a
//                  template uses {attempt} or --resume is given, that is the first error of the
//                  preflight's block (with --no-preflight it ends the run: exit 1); otherwise a
//                  warning, and the attempt is 0
//   Preflight      RunWork::Preflight, shown to the observer; an error (under --strict a warning
//                  too) ends the run with exit 1 before anything was created
//   Prepare        output dirs exist; a trigger request left by an earlier run is removed
//   Resume         with --resume: the job's newest complete checkpoint set copied into the resume
//                  directory (nothing there is fine); stoppable like stage-in; an error ends the
//                  run (exit 1)
//   StageIn        each input copied on a background task while this thread waits for signals;
//                  a stop signal cancels it and ends the run (128+signal): nothing was produced
//   StartCommand   a stop signal still pending ends the run the same way; else ferry tracks the
//                  command's descendants (when the system lets it) and starts the command
//                  (with RunWork::ExtraEnvironment added to its environment)
//   Supervise      until the command ends: periodic syncs, on-demand syncs (SIGUSR1, the trigger
//                  file), stop signals forwarded at once (to the main process, or with
//                  signal_group to the process group), SIGKILL to the group after the grace period
//   StopLeftovers  what the command left running is stopped before anything is staged out
//   FinalStageOut  the final sync; a second stop signal cancels it (128+signal)
//   Outcome        the exit-status rule (DecideExit)
//
// Supervise is one loop around SignalSource::Wait. It wakes for a signal at once, and at the
// latest when the next periodic sync is due, when the grace period ends, or to poll the trigger
// file (500 ms) or the sync in flight (100 ms). Syncs run on a BackgroundTask, never on this
// thread, so a stop signal reaches the command at once even during a long upload; the sync in
// flight is then cancelled (the final stage-out takes everything). The next periodic sync is due
// `interval` after the previous sync ended. SIGUSR1 that comes while a sync runs is kept for the
// next one.
//
// Stop signals (SIGTERM, SIGINT): the first one once the command has started begins the
// shutdown; the command's main process (its process group with signal_group, or when its
// descendants cannot be tracked) gets SIGTERM if it still runs, and the final stage-out runs
// whatever happened. Every later one (also one that comes while leftovers are being stopped)
// cancels the final stage-out. Before the command starts, any stop signal ends the run.
//
// Not thread-safe: one thread drives the phases; only RunWork's calls run on task threads.

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "base/status.h"
#include "job/preflight.h"
#include "job/run.h"
#include "job/run_plan.h"
#include "job/run_system.h"
#include "job/sync.h"
#include "job/trigger_file.h"

namespace ferry::job {

// What the phases do with data: the real one works on stores (run.cc), tests script it. Resume,
// stage-in and Sync are called on task threads, one at a time.
class RunWork {
 public:
  virtual ~RunWork() = default;
  // Claims this run's attempt number in the job's records (ClaimAttempt).
  virtual Result<int> CountAttempt(const RunPlan& plan) = 0;
  virtual PreflightReport Preflight(const RunPlan& plan) = 0;
  // Finds the job's newest complete set (nullopt: none) and copies it into the resume directory;
  // ends within about a second once `cancel` is set.
  virtual Result<std::optional<ResumeSource>> Resume(const RunPlan& plan,
                                                     const std::atomic<bool>& cancel) = 0;
  // Copies input `src_url` into the local directory `dir`; ends within about a second once
  // `cancel` is set. Errors name the input.
  virtual Status StageIn(const std::string& src_url, const std::string& dir,
                         const std::atomic<bool>& cancel) = 0;
  // One sync of every output (SyncAllOutputs); ends within about a second once `cancel` is set.
  virtual SyncRound Sync(const RunPlan& plan, SyncKind kind, const ChildState& child,
                         const std::atomic<bool>& cancel) = 0;
  // Just before the command starts: variables to add to its environment (RunPlan::extra_env).
  virtual std::vector<std::pair<std::string, std::string>> ExtraEnvironment(const RunPlan&) {
    return {};
  }
};

// The exit-status rule once the final stage-out has run: the command's status, except that a
// command which exited 0 while the final stage-out failed or skipped files makes ferry fail
// (exit 1 with the reason).
RunOutcome DecideExit(const ChildState& child, const SyncRound& final_round);

class RunLifecycle final {
 public:
  // `system` and `work` must outlive this object.
  RunLifecycle(RunPlan plan, RunSystem system, RunWork& work);

  // Every phase in order.
  RunOutcome Run(const PreflightObserver& on_preflight);

  // The phases, in the order Run() calls them. A Status that is not OK ends the run: Outcome()
  // turns it into the exit status.
  Status Identify();
  // `identified`: what Identify returned; an error there is reported as a preflight error.
  Status Preflight(const PreflightObserver& on_preflight, const Status& identified = Status());
  void Prepare();
  Status Resume();
  Status StageIn();
  Status StartCommand();
  void Supervise();
  void StopLeftovers();
  Status FinalStageOut();
  // `ended`: the status of the phase that ended the run, or OK after FinalStageOut.
  RunOutcome Outcome(const Status& ended) const;

  const ChildState& child() const { return child_; }
  const RunPlan& plan() const { return plan_; }

 private:
  using Work = std::function<void(const std::atomic<bool>& cancel)>;

  // Runs `work` on a task while this thread waits for signals. A stop signal for which
  // `cancels(signal)` is true cancels the task. Returns that signal; 0 when it ran to its end.
  int RunStoppable(Work work, const std::function<bool(int)>& cancels);
  std::unique_ptr<BackgroundTask> StartSync(SyncKind kind);
  // A stop signal once the command has started: remembered, so the next one is the second.
  void NoteStop();
  // The run ends because of stop signal `sig`.
  Status EndedBy(int sig, std::string why);
  Status NotStartedIfStopPending();
  void RecordExit(const ProcessExit& exit);

  RunPlan plan_;
  RunSystem system_;
  RunWork& work_;
  TriggerFile trigger_;
  ChildState child_;
  bool tracked_ = false;  // the command's descendants can be found (TrackDescendants)
  int stops_ = 0;         // stop signals received since the command started
  std::optional<SteadyTime> first_stop_at_;
  int ended_by_signal_ = 0;
  std::string attempt_warning_;  // the attempt could not be counted, which did not matter
  SyncRound sync_round_;         // written by the sync task, read after it ended
  SyncRound final_round_;        // likewise
};

}  // namespace ferry::job
