#pragma once
// The real RunSystem (run_system.h): the steady clock, sigprocmask + sigtimedwait, fork/exec +
// kill + waitpid with ferry as a child subreaper (process_tree.h), and a thread per task. Thin on
// purpose: every decision is in lifecycle.cc, where it is tested with fakes.

#include <signal.h>

#include <chrono>
#include <memory>

#include "job/output_tee.h"
#include "job/run_guard.h"
#include "job/run_system.h"

namespace ferry::job {

class SteadyClock final : public Clock {
 public:
  SteadyTime Now() const override { return std::chrono::steady_clock::now(); }
};

// Blocks SIGTERM, SIGINT, SIGUSR1 and SIGCHLD in the constructing thread (threads it starts
// later inherit the mask, so the signals stay pending for Wait()). The destructor discards a
// SIGUSR1 or SIGCHLD still pending (a sync request or a child that outlived the run: delivered
// after the mask is restored, SIGUSR1's default action would kill ferry) and restores the mask.
class PosixSignalSource final : public SignalSource {
 public:
  PosixSignalSource();
  ~PosixSignalSource() override;
  PosixSignalSource(const PosixSignalSource&) = delete;
  PosixSignalSource& operator=(const PosixSignalSource&) = delete;

  // The mask before the constructor ran: what the command starts with.
  const sigset_t& original_mask() const { return original_; }

  int Wait(std::chrono::milliseconds timeout) override;
  int TakePendingStop() override;

 private:
  sigset_t held_;
  sigset_t original_;
};

// How the command is to be stopped: what the guard does if ferry dies (run_guard.h). The
// lifecycle makes the same choices while ferry lives.
struct StopPolicy {
  std::chrono::seconds grace{30};
  bool signal_group = false;  // RunOptions::signal_group
  bool guard = true;          // start a guard with the command
};

// Start() forks a guard (run_guard.h) before the command and tells it what ferry sends the
// command; StopLeftovers() releases it once nothing is left, or the destructor once the command
// was reaped. A launcher destroyed while its command still runs leaves the guard to stop it.
// A command started by PosixProcessLauncher inherits descriptors 0-2, those this process was
// started with, and those passed here; every other descriptor (libcurl's sockets, ferry's own
// pipes and files, most without close-on-exec) is closed before exec. Not thread-safe: call
// before starting commands.
void PassDescriptorToCommands(int fd);

class PosixProcessLauncher final : public ProcessLauncher {
 public:
  // `child_mask`: the signal mask the command starts with (PosixSignalSource::original_mask).
  explicit PosixProcessLauncher(const sigset_t& child_mask, StopPolicy policy = {})
      : child_mask_(child_mask), policy_(policy) {}
  ~PosixProcessLauncher() override;
  PosixProcessLauncher(const PosixProcessLauncher&) = delete;
  PosixProcessLauncher& operator=(const PosixProcessLauncher&) = delete;

  Status TrackDescendants() override;
  Result<pid_t> Start(const std::vector<std::string>& argv,
                      const std::vector<std::pair<std::string, std::string>>& env) override;
  void Signal(pid_t pid, int sig) override;
  void SignalGroup(pid_t group, int sig) override;
  void TerminateEscaped(pid_t group) override;
  std::optional<ProcessExit> ReapExited(pid_t command) override;
  LeftoverReport StopLeftovers(SteadyTime kill_at) override;

  // From the next Start() on, the command's stdout and stderr pass through an OutputTee
  // (output_tee.h) that also hands them to `sink` (not owned; outlives the launcher's use).
  // When the pipes cannot be made, the command runs with ferry's descriptors (one warning).
  void CaptureOutput(OutputSink* sink) { capture_ = sink; }
  // Waits at most `wait` for the captured output's last bytes (every writer gone), then stops
  // the copy. Call once the command and what it left running have ended.
  void FinishCapture(std::chrono::milliseconds wait) {
    if (tee_) tee_->Finish(wait);
  }

  // The guard of the command started last; 0 when there is none (tests).
  pid_t guard_pid() const { return guard_ ? guard_->pid() : 0; }

 private:
  // The guard's part of a SIGTERM or SIGKILL ferry sent to the command.
  void TellGuard(pid_t target, int sig);

  sigset_t child_mask_;
  StopPolicy policy_;
  bool tracking_ = false;  // TrackDescendants succeeded
  std::unique_ptr<RunGuard> guard_;
  pid_t command_ = 0;
  bool command_ended_ = false;
  OutputSink* capture_ = nullptr;
  std::unique_ptr<OutputTee> tee_;
};

// One std::thread per task.
class ThreadTaskRunner final : public TaskRunner {
 public:
  std::unique_ptr<BackgroundTask> Start(
      std::function<void(const std::atomic<bool>& cancel)> work) override;
};

}  // namespace ferry::job
