#include "job/run_system_posix.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <thread>

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

Status PosixProcessLauncher::TrackDescendants() {
  if (!BecomeSubreaper()) {
    return Status(StatusCode::kFailedPrecondition,
                  std::string("cannot become a child subreaper (") + std::strerror(errno) + ")");
  }
  if (!ProcShowsThisProcess()) {
    return Status(StatusCode::kFailedPrecondition, "/proc is not this process's pid namespace");
  }
  return Status();
}

Result<pid_t> PosixProcessLauncher::Start(
    const std::vector<std::string>& argv,
    const std::vector<std::pair<std::string, std::string>>& env) {
  if (argv.empty()) return InvalidArgument("no command to run");
  pid_t pid = ::fork();
  if (pid < 0) {
    return Status(StatusCode::kUnavailable,
                  std::string("cannot start the command: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::setpgid(0, 0);  // its own process group: signals reach the whole training process tree
    ::sigprocmask(SIG_SETMASK, &child_mask_, nullptr);
    for (const auto& [name, value] : env) ::setenv(name.c_str(), value.c_str(), 1);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    std::fprintf(stderr, "ferry: error: cannot run '%s': %s\n", args[0], std::strerror(errno));
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also here, so no signal to the group can come before the child's call
  return pid;
}

void PosixProcessLauncher::SignalGroup(pid_t group, int sig) { ::kill(-group, sig); }

void PosixProcessLauncher::TerminateEscaped(pid_t group) {
  for (const auto& e : Descendants(::getpid(), ReadProcTable())) {
    if (e.pgid != group) ::kill(e.pid, SIGTERM);
  }
}

std::optional<ProcessExit> PosixProcessLauncher::ReapExited(pid_t command) {
  std::optional<int> status;
  ReapExitedChildren(command, &status);
  if (!status) return std::nullopt;
  if (WIFSIGNALED(*status)) return ProcessExit{.signal = WTERMSIG(*status)};
  return ProcessExit{.code = WEXITSTATUS(*status)};
}

LeftoverReport PosixProcessLauncher::StopLeftovers(SteadyTime kill_at) {
  return job::StopLeftovers(kill_at);
}

std::unique_ptr<BackgroundTask> ThreadTaskRunner::Start(
    std::function<void(const std::atomic<bool>& cancel)> work) {
  return std::make_unique<ThreadTask>(std::move(work));
}

}  // namespace ferry::job
