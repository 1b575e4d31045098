#pragma once
// What `ferry run`'s lifecycle (lifecycle.h) needs from the operating system, behind four small
// interfaces so the phases, the supervisor loop above all, are unit-tested with fakes: no real
// processes, no real signals, no real sleeps (job/run_system_test_util.h).
//
//   Clock           the monotonic time intervals and the grace period are measured with
//   SignalSource    the signals ferry run handles itself, held and waited for (sigtimedwait)
//   ProcessLauncher the command: start (fork/exec), signal, reap; the processes it leaves behind
//                   (the real one also starts a guard that stops the command if ferry dies)
//   TaskRunner      work that runs beside the wait for signals (a sync, a stage-in copy)
//
// The real implementations (run_system_posix.h) are thin wrappers of the system calls. None of
// these objects is thread-safe: the lifecycle calls them from one thread; only the work a
// TaskRunner runs is on another.

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "job/process_tree.h"

namespace ferry::job {

using SteadyTime = std::chrono::steady_clock::time_point;

class Clock {
 public:
  virtual ~Clock() = default;
  virtual SteadyTime Now() const = 0;
};

// SIGTERM, SIGINT (stop), SIGUSR1 (sync now) and SIGCHLD (a child ended): held from the moment
// the source exists, so none of them takes its default action while ferry run is in charge.
class SignalSource {
 public:
  virtual ~SignalSource() = default;
  // Waits at most `timeout` for one of the held signals and takes it; 0 when none came.
  virtual int Wait(std::chrono::milliseconds timeout) = 0;
  // Takes a SIGTERM or SIGINT that is already pending, without waiting; 0 when none is.
  virtual int TakePendingStop() = 0;
};

inline bool IsStopSignal(int sig) { return sig == SIGTERM || sig == SIGINT; }

// How a process ended.
struct ProcessExit {
  int code = 0;    // its exit code, when signal == 0
  int signal = 0;  // the signal that killed it; 0 = it exited
};

class ProcessLauncher {
 public:
  virtual ~ProcessLauncher() = default;
  // Keeps every process the command will start below ferry (a child subreaper), so what it
  // leaves behind can be found and stopped. An error says why that is not possible here; then
  // TerminateEscaped and StopLeftovers must not be called.
  virtual Status TrackDescendants() = 0;
  // Starts `argv` (looked up in PATH) in a process group of its own, with ferry's environment
  // plus `env`. Returns its pid, which is also its process group id.
  virtual Result<pid_t> Start(const std::vector<std::string>& argv,
                              const std::vector<std::pair<std::string, std::string>>& env) = 0;
  // Sends `sig` to process `pid` alone (the command's main process).
  virtual void Signal(pid_t pid, int sig) = 0;
  // Sends `sig` to every process of process group `group`.
  virtual void SignalGroup(pid_t group, int sig) = 0;
  // SIGTERM to the processes below ferry that left process group `group` (setsid, daemons).
  virtual void TerminateEscaped(pid_t group) = 0;
  // Reaps every child that has ended, without blocking (orphans re-parented to ferry too).
  // Returns how `command` ended when it is among them.
  virtual std::optional<ProcessExit> ReapExited(pid_t command) = 0;
  // Stops every process still below ferry: SIGTERM now, SIGKILL at `kill_at` (process_tree.h).
  virtual LeftoverReport StopLeftovers(SteadyTime kill_at) = 0;
};

// One piece of work running beside the lifecycle's thread.
class BackgroundTask {
 public:
  virtual ~BackgroundTask() = default;  // waits for the work to end
  // Whether the work has ended; after true, what it wrote is visible to the caller.
  virtual bool Done() = 0;
  // Sets the work's cancel flag; well-behaved work then ends within about a second.
  virtual void Cancel() = 0;
  // Blocks until the work has ended.
  virtual void Wait() = 0;
};

class TaskRunner {
 public:
  virtual ~TaskRunner() = default;
  // Starts `work`, which watches the cancel flag it is given.
  virtual std::unique_ptr<BackgroundTask> Start(
      std::function<void(const std::atomic<bool>& cancel)> work) = 0;
};

// The four together, as the lifecycle takes them (not owned).
struct RunSystem {
  Clock& clock;
  SignalSource& signals;
  ProcessLauncher& processes;
  TaskRunner& tasks;
};

}  // namespace ferry::job
