#include "job/run_system_posix.h"

#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

#include "base/log.h"

extern char** environ;

namespace ferry::job {

namespace {

timespec ToTimespec(std::chrono::milliseconds d) {
  if (d.count() < 0) d = std::chrono::milliseconds(0);
  return {static_cast<time_t>(d.count() / 1000), static_cast<long>(d.count() % 1000) * 1000000};
}

// The descriptors above 2 open when the process started (read before main): what ferry's own
// caller handed down (a scheduler's PMI socket, a shell's `3<file`). A command ferry starts keeps
// those and nothing else: libcurl's sockets, ifstreams and other descriptors ferry opened itself
// have no close-on-exec and would otherwise leak into the training process (and its workers).
std::vector<int> OpenDescriptorsAbove2() {
  std::vector<int> fds;
  DIR* dir = ::opendir("/proc/self/fd");
  if (!dir) return fds;
  const int own = ::dirfd(dir);
  while (dirent* e = ::readdir(dir)) {
    char* end = nullptr;
    long fd = std::strtol(e->d_name, &end, 10);
    if (end != e->d_name && *end == '\0' && fd > 2 && fd != own)
      fds.push_back(static_cast<int>(fd));
  }
  ::closedir(dir);
  std::sort(fds.begin(), fds.end());
  return fds;
}
std::vector<int> kept_for_commands = OpenDescriptorsAbove2();

// In the child before exec (async-signal-safe): closes [first, last].
void CloseRange(int first, int last) {
  if (first > last) return;
  if (::close_range(static_cast<unsigned>(first), static_cast<unsigned>(last), 0) == 0) return;
  const int limit = std::min(last, 65535);  // kernels before 5.9
  for (int fd = first; fd <= limit; ++fd) ::close(fd);
}

// Every descriptor above 2 except those the process started with.
void CloseDescriptorsFerryOpened() {
  int from = 3;
  for (int fd : kept_for_commands) {
    CloseRange(from, fd - 1);
    from = std::max(from, fd + 1);
  }
  CloseRange(from, INT_MAX);
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

void PassDescriptorToCommands(int fd) {
  if (fd <= 2 || std::binary_search(kept_for_commands.begin(), kept_for_commands.end(), fd)) return;
  kept_for_commands.insert(std::upper_bound(kept_for_commands.begin(), kept_for_commands.end(), fd),
                           fd);
}

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
    CloseDescriptorsFerryOpened();
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
