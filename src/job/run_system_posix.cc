#include "job/run_system_posix.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>
#include <thread>

#include "base/log.h"

extern char** environ;

namespace ferry::job {

namespace {

timespec ToTimespec(std::chrono::milliseconds d) {
  if (d.count() < 0) d = std::chrono::milliseconds(0);
  return {static_cast<time_t>(d.count() / 1000), static_cast<long>(d.count() % 1000) * 1000000};
}

// Takes one of `signals` if it is pending; 0 when none is.
int TakeIfPending(std::initializer_list<int> signals) {
  sigset_t pending;
  ::sigpending(&pending);
  for (int s : signals) {
    if (!sigismember(&pending, s)) continue;
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, s);
    timespec zero{0, 0};
    if (::sigtimedwait(&one, nullptr, &zero) == s) return s;
  }
  return 0;
}

class ThreadTask final : public BackgroundTask {
 public:
  explicit ThreadTask(std::function<void(const std::atomic<bool>&)> work)
      : thread_([this, work = std::move(work)] {
          work(cancel_);
          done_.store(true, std::memory_order_release);
        }) {}
  ~ThreadTask() override { Wait(); }

  bool Done() override { return done_.load(std::memory_order_acquire); }
  void Cancel() override { cancel_ = true; }
  void Wait() override {
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::atomic<bool> cancel_{false};
  std::atomic<bool> done_{false};
  std::thread thread_;  // last: it starts once the flags exist
};

}  // namespace

PosixSignalSource::PosixSignalSource() {
  sigemptyset(&held_);
  for (int s : {SIGTERM, SIGINT, SIGUSR1, SIGCHLD}) sigaddset(&held_, s);
  ::sigprocmask(SIG_BLOCK, &held_, &original_);
}

PosixSignalSource::~PosixSignalSource() {
  while (TakeIfPending({SIGUSR1, SIGCHLD}) != 0) {
  }
  ::sigprocmask(SIG_SETMASK, &original_, nullptr);
}

int PosixSignalSource::Wait(std::chrono::milliseconds timeout) {
  timespec ts = ToTimespec(timeout);
  int sig = ::sigtimedwait(&held_, nullptr, &ts);
  return sig > 0 ? sig : 0;
}

int PosixSignalSource::TakePendingStop() { return TakeIfPending({SIGTERM, SIGINT}); }

PosixProcessLauncher::~PosixProcessLauncher() {
  // Done with a command that was reaped; one still running is left to the guard.
  if (guard_ && command_ended_) guard_->Release();
}

Status PosixProcessLauncher::TrackDescendants() {
  if (!BecomeSubreaper()) {
    return Status(StatusCode::kFailedPrecondition,
                  std::string("cannot become a child subreaper (") + std::strerror(errno) + ")");
  }
  if (!ProcShowsThisProcess()) {
    return Status(StatusCode::kFailedPrecondition, "/proc is not this process's pid namespace");
  }
  tracking_ = true;
  return Status();
}

Result<pid_t> PosixProcessLauncher::Start(
    const std::vector<std::string>& argv,
    const std::vector<std::pair<std::string, std::string>>& env) {
  if (argv.empty()) return InvalidArgument("no command to run");
  // The guard first: from the command's first instruction on, ferry's death stops it.
  if (guard_) {
    if (command_ended_) guard_->Release();
    guard_.reset();
  }
  std::vector<std::pair<std::string, std::string>> full_env = env;
  if (policy_.guard) {
    // Without tracking, the lifecycle signals the whole group at once; the guard does the same.
    GuardConfig config{.grace = policy_.grace,
                       .signal_group = policy_.signal_group || !tracking_,
                       .scan_proc = tracking_,
                       .token = NewGuardToken()};
    auto guard = RunGuard::Start(config);
    if (guard.ok()) {
      guard_ = std::move(*guard);
      full_env.emplace_back(kGuardTokenVariable, config.token);
    } else {
      Log(LogLevel::kWarn, "{}: the command will not be stopped if ferry is killed",
          guard.status().message());
    }
  }
  const int guard_fd = guard_ ? guard_->fd() : -1;
  command_ = 0;
  command_ended_ = false;
  // Everything the child needs is built here: between fork and exec only async-signal-safe
  // calls are made (other threads may hold the allocator's locks at the fork).
  std::vector<std::string> env_entries;
  std::set<std::string> replaced;
  for (const auto& [name, value] : full_env) {
    env_entries.push_back(name + "=" + value);
    replaced.insert(name);
  }
  for (char** e = environ; e && *e; ++e) {
    std::string_view entry(*e);
    if (!replaced.contains(std::string(entry.substr(0, entry.find('='))))) {
      env_entries.emplace_back(entry);
    }
  }
  std::vector<char*> envp, args;
  for (auto& e : env_entries) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (auto& a : argv_copy) args.push_back(a.data());
  args.push_back(nullptr);
  std::string cannot_run = "ferry: error: cannot run '" + argv[0] + "': ";
  int tee_out = -1, tee_err = -1;
  if (capture_) {
    if (tee_) tee_->Finish(std::chrono::milliseconds(0));
    auto tee = OutputTee::Open(*capture_);
    if (tee.ok()) {
      tee_ = std::move(*tee);
      tee_out = tee_->child_stdout();
      tee_err = tee_->child_stderr();
    } else {
      tee_.reset();
      Log(LogLevel::kWarn, "{}: it goes to ferry's stdout and stderr only", tee.status().message());
    }
  }

  pid_t pid = ::fork();
  if (pid < 0) {
    return Status(StatusCode::kUnavailable,
                  std::string("cannot start the command: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::setpgid(0, 0);  // its own process group: signals reach the whole training process tree
    if (guard_fd >= 0) TellGuardCommandStarted(guard_fd);  // covered even if ferry dies now
    ::sigprocmask(SIG_SETMASK, &child_mask_, nullptr);
    if (tee_out >= 0) {
      ::dup2(tee_out, STDOUT_FILENO);  // dup2 clears close-on-exec on the copies
      ::dup2(tee_err, STDERR_FILENO);
    }
    ::execvpe(args[0], args.data(), envp.data());
    const char* why = std::strerror(errno);
    ssize_t ignored = ::write(STDERR_FILENO, cannot_run.data(), cannot_run.size());
    ignored = ::write(STDERR_FILENO, why, std::strlen(why));
    ignored = ::write(STDERR_FILENO, "\n", 1);
    (void)ignored;
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also here, so no signal to the group can come before the child's call
  if (tee_) tee_->Start();
  command_ = pid;
  if (guard_) guard_->NoteCommand(pid);
  return pid;
}

void PosixProcessLauncher::TellGuard(pid_t target, int sig) {
  if (!guard_ || target != command_) return;
  if (sig == SIGTERM) guard_->NoteStopForwarded();
  if (sig == SIGKILL) guard_->NoteGroupKilled();
}

void PosixProcessLauncher::Signal(pid_t pid, int sig) {
  ::kill(pid, sig);
  if (sig == SIGTERM) TellGuard(pid, sig);
}

void PosixProcessLauncher::SignalGroup(pid_t group, int sig) {
  ::kill(-group, sig);
  TellGuard(group, sig);
}

void PosixProcessLauncher::TerminateEscaped(pid_t group) {
  for (const auto& e : Descendants(::getpid(), ReadProcTable())) {
    if (e.pgid != group && e.pid != guard_pid()) ::kill(e.pid, SIGTERM);
  }
}

std::optional<ProcessExit> PosixProcessLauncher::ReapExited(pid_t command) {
  std::optional<int> status;
  ReapExitedChildren(command, &status);
  if (!status) return std::nullopt;
  if (command == command_) command_ended_ = true;
  if (WIFSIGNALED(*status)) return ProcessExit{.signal = WTERMSIG(*status)};
  return ProcessExit{.code = WEXITSTATUS(*status)};
}

LeftoverReport PosixProcessLauncher::StopLeftovers(SteadyTime kill_at) {
  LeftoverReport report =
      job::StopLeftovers(kill_at, std::chrono::seconds(5), "/proc", guard_pid());
  // Nothing of the command is left (but what cannot be killed): the guard has done its job.
  if (guard_) guard_->Release();
  return report;
}

std::unique_ptr<BackgroundTask> ThreadTaskRunner::Start(
    std::function<void(const std::atomic<bool>& cancel)> work) {
  return std::make_unique<ThreadTask>(std::move(work));
}

}  // namespace ferry::job
