#include "job/lifecycle.h"

#include <algorithm>
#include <filesystem>

#include "base/log.h"

namespace ferry::job {

namespace {

using std::chrono::milliseconds;

// The trigger file is polled twice a second (run.md).
constexpr milliseconds kTriggerPoll(500);
// How soon a background task's end is noticed: short enough that a trigger request is answered
// promptly, long enough not to spin while a long upload runs. Signals wake the wait at once.
constexpr milliseconds kTaskPoll(100);
// After SIGKILL there is nothing left to escalate to: the loop only waits for the exit.
constexpr std::chrono::hours kNothingLeftToSend(24);

}  // namespace

RunOutcome DecideExit(const ChildState& child, const SyncRound& final_round) {
  if (child.exit_code == 0 && !final_round.status.ok()) {
    // A success whose results did not reach their destination is not a success.
    return {1, Status(StatusCode::kFailedPrecondition,
                      "the command succeeded but the final stage-out failed")};
  }
  if (child.exit_code == 0 && final_round.skipped > 0) {
    return {1, Status(StatusCode::kFailedPrecondition,
                      fmt::format("the command succeeded but {} file(s) could not be uploaded "
                                  "consistently by the final stage-out (they changed, vanished or "
                                  "could not be read; the manifest lists them as skipped); "
                                  "first: {}",
                                  final_round.skipped, final_round.first_skipped))};
  }
  return {child.exit_code < 0 ? 1 : child.exit_code, Status()};
}

RunLifecycle::RunLifecycle(RunPlan plan, RunSystem system, RunWork& work)
    : plan_(std::move(plan)), system_(system), work_(work), trigger_(plan_.options.trigger_file) {}

RunOutcome RunLifecycle::Run(const PreflightObserver& on_preflight) {
  // An attempt that cannot be counted is one more preflight problem, shown in its block.
  Status s = Identify();
  if (s.ok() || !plan_.options.skip_preflight) s = Preflight(on_preflight, s);
  // Nothing is created before the preflight has passed: a run it stops leaves no directories.
  if (s.ok()) Prepare();
  if (s.ok()) s = Resume();
  if (s.ok()) s = StageIn();
  if (s.ok()) s = StartCommand();
  if (!s.ok()) return Outcome(s);
  Supervise();
  StopLeftovers();
  return Outcome(FinalStageOut());
}

void RunLifecycle::Prepare() {
  trigger_.RemoveStale();  // a request from an earlier run is not one of this run's
  for (const auto& o : plan_.outputs) {
    std::error_code ec;
    std::filesystem::create_directories(o.dir, ec);
  }
}

Status RunLifecycle::Identify() {
  std::optional<int> counted;
  if (NeedsAttemptCount(plan_)) {
    auto n = work_.CountAttempt(plan_);
    if (n.ok()) {
      counted = *n;
    } else if (AttemptMatters(plan_)) {
      return n.status();
    } else {
      // Nothing is named or resumed by the attempt: the command is told 0, the run goes on.
      attempt_warning_ = n.status().message() + " (the attempt is taken as 0)";
      Log(LogLevel::kWarn, "{}", attempt_warning_);
    }
  }
  FERRY_RETURN_IF_ERROR(AssignAttempt(plan_, counted));
  Log(LogLevel::kInfo, "run {} attempt {}{}", plan_.id.job, plan_.id.attempt,
      counted ? " (counted from the job's records)" : "");
  return Status();
}

Status RunLifecycle::Preflight(const PreflightObserver& on_preflight, const Status& identified) {
  if (!identified.ok()) {
    // The destinations are probed all the same (as attempt 0) so the block names every problem.
    FERRY_RETURN_IF_ERROR(AssignAttempt(plan_, std::nullopt));
  }
  if (!plan_.options.skip_preflight) {
    // Every problem is reported in one block before any GPU time is spent.
    PreflightReport report = work_.Preflight(plan_);
    if (!identified.ok()) report.errors.insert(report.errors.begin(), identified.message());
    if (!attempt_warning_.empty())
      report.warnings.insert(report.warnings.begin(), attempt_warning_);
    const bool ok = report.ok(plan_.options.strict);
    if (on_preflight) on_preflight(report, ok);
    if (!ok) {
      return Status(StatusCode::kFailedPrecondition,
                    fmt::format("preflight failed{}; the command was not started",
                                report.errors.empty() ? " (--strict: warnings are fatal)" : ""));
    }
  }
  return NotStartedIfStopPending();
}

Status RunLifecycle::Resume() {
  if (plan_.options.resume_dir.empty()) return Status();
  Result<std::optional<ResumeSource>> found = std::nullopt;
  int sig =
      RunStoppable([&](const std::atomic<bool>& cancel) { found = work_.Resume(plan_, cancel); },
                   [](int) { return true; });
  if (sig != 0) {
    return EndedBy(sig, fmt::format("received signal {} while resuming into '{}'; stopped it and "
                                    "did not start the command",
                                    sig, plan_.options.resume_dir));
  }
  if (!found.ok()) {
    return found.status().WithContext("--resume '" + plan_.options.resume_dir + "'");
  }
  plan_.resumed_from = std::move(*found);
  if (plan_.resumed_from) {
    Log(LogLevel::kInfo, "resumed attempt {}'s {} set ({} file(s), {}) into '{}'",
        plan_.resumed_from->attempt, plan_.resumed_from->final ? "final" : "periodic",
        plan_.resumed_from->files.size(), plan_.resumed_from->manifest_url,
        plan_.options.resume_dir);
  } else {
    Log(LogLevel::kInfo, "nothing to resume for run {} (no earlier complete set); starting fresh",
        plan_.id.job);
  }
  return Status();
}

Status RunLifecycle::StageIn() {
  for (const auto& [src_url, dir] : plan_.options.inputs) {
    Status copied;
    int sig = RunStoppable(
        [&, &src_url = src_url, &dir = dir](const std::atomic<bool>& cancel) {
          copied = work_.StageIn(src_url, dir, cancel);
        },
        [](int) { return true; });
    if (sig != 0) {
      return EndedBy(sig, fmt::format("received signal {} during stage-in of '{}'; stopped it (a "
                                      "rerun resumes it) and did not start the command",
                                      sig, src_url));
    }
    FERRY_RETURN_IF_ERROR(copied);
  }
  return Status();
}

Status RunLifecycle::StartCommand() {
  // The tracking run first (it may take a moment): a stop signal meanwhile still stops the start.
  plan_.extra_env = work_.ExtraEnvironment(plan_);
  FERRY_RETURN_IF_ERROR(NotStartedIfStopPending());
  // Before the command starts: whatever it starts stays below ferry, even after setsid or a
  // daemon's double fork, so it can be stopped when the command ends.
  Status tracking = system_.processes.TrackDescendants();
  tracked_ = tracking.ok();
  if (!tracked_) {
    Log(LogLevel::kWarn,
        "{}: processes the command leaves running will not be stopped when it ends",
        tracking.message());
  }
  FERRY_ASSIGN_OR_RETURN(child_.pid,
                         system_.processes.Start(plan_.options.command, CommandEnvironment(plan_)));
  child_.running = true;
  Log(LogLevel::kInfo, "run {} started pid {}", plan_.id.job, child_.pid);
  return Status();
}

void RunLifecycle::Supervise() {
  Clock& clock = system_.clock;
  const auto interval = plan_.options.interval;
  SteadyTime next_sync = clock.Now() + interval;
  std::optional<SteadyTime> kill_at;  // set once a stop signal was forwarded
  std::unique_ptr<BackgroundTask> sync;
  bool sync_answers_trigger = false;
  SyncKind sync_kind = SyncKind::kPeriodic;
  bool usr1_pending = false;  // kept while a sync is in flight
  auto finish_sync = [&] {
    sync->Wait();
    sync.reset();
    // A request whose files were left out is not answered as done: the command's checkpoint
    // is not (all) at the destination.
    if (sync_answers_trigger) trigger_.Answer(sync_round_.AsStatus());
    next_sync = clock.Now() + interval;
  };
  while (true) {
    const SteadyTime now = clock.Now();
    SteadyTime wake = now + (sync ? kTaskPoll : kTriggerPoll);
    if (!sync && !kill_at) wake = std::min(wake, next_sync);
    if (kill_at) wake = std::min(wake, *kill_at);
    int sig = system_.signals.Wait(
        std::max(milliseconds(1), std::chrono::ceil<milliseconds>(wake - now)));
    // Reaps the command and any orphan re-parented to ferry (the subreaper) that has ended.
    if (auto exit = system_.processes.ReapExited(child_.pid)) {
      RecordExit(*exit);
      if (IsStopSignal(sig)) NoteStop();  // it came with the command's end: still the first
      break;
    }
    if (IsStopSignal(sig)) {
      // By default the main process alone: what it started (DataLoader workers) keeps serving it
      // while it saves, and is stopped once it has ended (StopLeftovers) or with the group's
      // SIGKILL. Without tracking nothing would stop what it leaves behind: the group then.
      if (plan_.options.signal_group || !tracked_) {
        Log(LogLevel::kWarn,
            "received signal {}: forwarding SIGTERM to the command's process group, {} s grace",
            sig, plan_.options.grace.count());
        system_.processes.SignalGroup(child_.pid, SIGTERM);
        if (tracked_) system_.processes.TerminateEscaped(child_.pid);
      } else {
        Log(LogLevel::kWarn,
            "received signal {}: forwarding SIGTERM to the command (pid {}); its process group "
            "gets SIGKILL in {} s",
            sig, child_.pid, plan_.options.grace.count());
        system_.processes.Signal(child_.pid, SIGTERM);
      }
      // A periodic sync in flight is cancelled: the final stage-out takes everything. One the
      // command asked for goes on: it may be waiting for it before it saves or exits.
      if (sync && sync_kind == SyncKind::kPeriodic) sync->Cancel();
      NoteStop();
      if (!kill_at) kill_at = *first_stop_at_ + plan_.options.grace;
    } else if (kill_at && clock.Now() >= *kill_at) {
      Log(LogLevel::kWarn, "grace period over: SIGKILL to the command's process group");
      system_.processes.SignalGroup(child_.pid, SIGKILL);
      kill_at = clock.Now() + kNothingLeftToSend;
    }
    if (sync && sync->Done()) finish_sync();
    if (sig == SIGUSR1) usr1_pending = true;
    const bool triggered = trigger_.Requested();
    // Requests are served also while the command is being stopped (a script that saves on
    // SIGTERM asks for its checkpoint's upload and waits); periodic syncs only before.
    const bool requested = usr1_pending || triggered;
    const bool periodic = !kill_at && clock.Now() >= next_sync;
    if ((requested || periodic) && !sync) {
      if (triggered) trigger_.ClearFailed();
      sync_kind = requested ? SyncKind::kOnDemand : SyncKind::kPeriodic;
      usr1_pending = false;
      sync_answers_trigger = triggered;
      sync = StartSync(sync_kind);
    }
  }
  if (sync) {
    sync->Cancel();  // the final stage-out supersedes it
    finish_sync();
  }
  Log(LogLevel::kInfo, "command {}; final stage-out", child_.how);
}

void RunLifecycle::StopLeftovers() {
  if (!tracked_) return;
  // Nothing the command started may keep writing into the outputs while they are staged out.
  // The grace period runs from ferry's first stop signal when there was one, else from now.
  SteadyTime kill_at = first_stop_at_.value_or(system_.clock.Now()) + plan_.options.grace;
  LeftoverReport left = system_.processes.StopLeftovers(kill_at);
  if (left.found.empty()) return;
  std::string pids;
  for (size_t i = 0; i < left.found.size() && i < 10; ++i) {
    pids += (i ? " " : "") + std::to_string(left.found[i]);
  }
  if (left.found.size() > 10) pids += " ...";
  Log(LogLevel::kWarn,
      "stopped {} process(es) the command left running (escaped or background; pid {}): {} "
      "ended on SIGTERM, {} needed SIGKILL{}",
      left.found.size(), pids, left.found.size() - static_cast<size_t>(left.killed), left.killed,
      left.started_meanwhile == 0
          ? ""
          : fmt::format(" ({} more that they started meanwhile were stopped too)",
                        left.started_meanwhile));
  if (!left.alive.empty()) {
    Log(LogLevel::kError,
        "{} process(es) still alive after SIGKILL (uninterruptible?); the final "
        "stage-out runs anyway",
        left.alive.size());
  }
}

Status RunLifecycle::FinalStageOut() {
  const ChildState child = child_;
  int second = RunStoppable(
      [this, child](const std::atomic<bool>& cancel) {
        final_round_ = work_.Sync(plan_, SyncKind::kFinal, child, cancel);
      },
      [this](int sig) {
        if (stops_ > 0) return true;
        NoteStop();
        Log(LogLevel::kWarn,
            "received signal {} after the command ended; the final stage-out goes on (a second "
            "signal stops it)",
            sig);
        return false;
      });
  if (second != 0) {
    Log(LogLevel::kError,
        "received signal {} during the final stage-out; stopped it: the outputs' newest "
        "complete manifest is from an earlier sync",
        second);
    ended_by_signal_ = second;
    return Status(StatusCode::kCancelled, "the final stage-out was stopped");
  }
  if (trigger_.Requested()) trigger_.Answer(final_round_.AsStatus());
  return Status();
}

RunOutcome RunLifecycle::Outcome(const Status& ended) const {
  if (ended.ok()) return DecideExit(child_, final_round_);
  if (ended_by_signal_ != 0) return {128 + ended_by_signal_, Status()};
  // The caller prints the error and exits 1: it must not read as an interruption.
  if (ended.code() == StatusCode::kCancelled) {
    return {1, Status(StatusCode::kInternal, ended.message())};
  }
  return {1, ended};
}

int RunLifecycle::RunStoppable(Work work, const std::function<bool(int)>& cancels) {
  auto task = system_.tasks.Start(std::move(work));
  int stopped_by = 0;
  while (!task->Done()) {
    int sig = system_.signals.Wait(kTaskPoll);
    if (!IsStopSignal(sig) || stopped_by != 0) continue;
    if (cancels(sig)) {
      stopped_by = sig;
      task->Cancel();
    }
  }
  task->Wait();
  return stopped_by;
}

std::unique_ptr<BackgroundTask> RunLifecycle::StartSync(SyncKind kind) {
  const ChildState snapshot = child_;
  return system_.tasks.Start([this, kind, snapshot](const std::atomic<bool>& cancel) {
    sync_round_ = work_.Sync(plan_, kind, snapshot, cancel);
  });
}

void RunLifecycle::NoteStop() {
  ++stops_;
  child_.interrupted = true;
  if (!first_stop_at_) first_stop_at_ = system_.clock.Now();
}

Status RunLifecycle::EndedBy(int sig, std::string why) {
  Log(LogLevel::kWarn, "{}", why);
  ended_by_signal_ = sig;
  return Status(StatusCode::kCancelled, std::move(why));
}

Status RunLifecycle::NotStartedIfStopPending() {
  int sig = system_.signals.TakePendingStop();
  if (sig == 0) return Status();
  return EndedBy(
      sig, fmt::format("received signal {} before the command started; not starting it", sig));
}

void RunLifecycle::RecordExit(const ProcessExit& exit) {
  child_.running = false;
  if (exit.signal != 0) {
    child_.exit_code = 128 + exit.signal;
    child_.how = "killed by signal " + std::to_string(exit.signal);
  } else {
    child_.exit_code = exit.code;
    child_.how = "exited " + std::to_string(exit.code);
  }
}

}  // namespace ferry::job
