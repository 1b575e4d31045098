#include "job/run_guard.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <optional>
#include <random>
#include <thread>

#include "base/errno_status.h"
#include "base/strings.h"
#include "job/process_tree.h"

namespace ferry::job {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Message kinds: one byte, then a pid (only meaningful for kCommand).
constexpr char kCommand = 'P';
constexpr char kStopForwarded = 'T';
constexpr char kGroupKilled = 'K';
constexpr char kRelease = 'D';
constexpr size_t kMessageSize = 1 + sizeof(pid_t);

// While ferry lives: how often the guard checks that the command's group still exists. The
// kernel cannot hand its number to a new process while the group has members; once it is empty
// the number could be reused only after a wrap-around of the pid space, far slower than this.
constexpr milliseconds kGroupCheck(200);
// While the guard stops the command: how often it looks again (as StopLeftovers does, coarser:
// nobody waits for the guard).
constexpr milliseconds kStopPoll(100);
// After SIGKILL, how long the guard waits for processes in uninterruptible sleep (as ferry does).
constexpr std::chrono::seconds kGiveUp(5);
// How long Release() waits to reap the guard: it exits as soon as it reads the message, so this
// only bounds the wait on a machine too loaded to schedule it (or a guard someone stopped).
constexpr milliseconds kReapWait(1000);

void Encode(char kind, pid_t pid, char (&out)[kMessageSize]) {
  out[0] = kind;
  std::memcpy(out + 1, &pid, sizeof pid);
}

// --- What runs in the guard: async-signal-safe only (no allocation, no locks, no stdio) -------

bool AllDigits(const char* s) {
  if (*s == '\0') return false;
  for (; *s; ++s) {
    if (*s < '0' || *s > '9') return false;
  }
  return true;
}

// "/proc/<name><suffix>" into `out`; false when it does not fit.
bool ProcPath(char (&out)[64], const char* name, const char* suffix) {
  size_t n = std::strlen(name), s = std::strlen(suffix);
  if (6 + n + s + 1 > sizeof out) return false;
  std::memcpy(out, "/proc/", 6);
  std::memcpy(out + 6, name, n);
  std::memcpy(out + 6 + n, suffix, s + 1);
  return true;
}

// The first `size` bytes of a file; -1 when it cannot be read (the process exited).
ssize_t ReadHead(const char* path, char* buf, size_t size) {
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  size_t got = 0;
  while (got < size) {
    ssize_t n = ::read(fd, buf + got, size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  return static_cast<ssize_t>(got);
}

bool EnvironHolds(const char* pid_name, std::string_view entry) {
  char path[64];
  if (!ProcPath(path, pid_name, "/environ")) return false;
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;  // exited, or someone else's
  EnvironEntryMatcher matcher(entry);
  char buf[4096];
  while (!matcher.found()) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    matcher.Feed(std::string_view(buf, static_cast<size_t>(n)));
  }
  ::close(fd);
  return matcher.found();
}

struct Seen {
  bool main_alive = false;
  bool rest_alive = false;
};

// What is left of the command: one pass over /proc. Escaped processes (outside `group`, with the
// token) get `escaped_signal` when it is not 0 (SIGCONT too after SIGTERM: a stopped process
// would hold it). `group` is 0 once it is gone.
Seen ScanProc(pid_t group, std::string_view entry, int escaped_signal) {
  Seen seen;
  int dir = ::open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return seen;
  const pid_t self = ::getpid();
  alignas(8) char buf[8192];
  while (true) {
    ssize_t n = ::getdents64(dir, buf, sizeof buf);
    if (n <= 0) break;
    for (ssize_t off = 0; off < n;) {
      const auto* d = reinterpret_cast<const dirent64*>(buf + off);
      off += d->d_reclen;
      if (!AllDigits(d->d_name)) continue;
      char path[64];
      char stat[1024];
      if (!ProcPath(path, d->d_name, "/stat")) continue;
      ssize_t len = ReadHead(path, stat, sizeof stat);
      if (len <= 0) continue;
      auto e = ParseProcStat(std::string_view(stat, static_cast<size_t>(len)));
      if (!e || e->pid == self || e->state == 'Z' || e->state == 'X') continue;
      if (group != 0 && e->pid == group) {
        seen.main_alive = true;
      } else if (group != 0 && e->pgid == group) {
        seen.rest_alive = true;
      } else if (EnvironHolds(d->d_name, entry)) {
        seen.rest_alive = true;
        if (escaped_signal != 0) {
          ::kill(e->pid, escaped_signal);
          if (escaped_signal == SIGTERM) ::kill(e->pid, SIGCONT);
        }
      }
    }
  }
  ::close(dir);
  return seen;
}

// Without a /proc of our pid namespace only the group can be seen, zombies included.
Seen ProbeGroup(pid_t group) {
  if (group == 0) return {};
  return {.main_alive = ::kill(group, 0) == 0, .rest_alive = ::kill(-group, 0) == 0};
}

bool Gone(pid_t group) { return ::kill(-group, 0) == -1 && errno == ESRCH; }

// Only the socket, on fd 3; /dev/null as stdin, stdout and stderr; nothing else.
int SettleDescriptors(int sock) {
  int s = ::fcntl(sock, F_DUPFD, 3);
  if (s < 0) s = sock;
  int null = ::open("/dev/null", O_RDWR);
  for (int fd = 0; fd <= 2; ++fd) {
    if (null >= 0 && null != fd) {
      ::dup2(null, fd);
    } else if (null < 0) {
      ::close(fd);
    }
  }
  if (s != 3 && ::dup2(s, 3) == 3) s = 3;
  if (::close_range(static_cast<unsigned>(s) + 1, ~0U, 0) != 0) {
    rlimit lim{};
    rlim_t max = ::getrlimit(RLIMIT_NOFILE, &lim) == 0 ? lim.rlim_cur : 1024;
    if (max > 65536) max = 65536;
    for (rlim_t fd = static_cast<rlim_t>(s) + 1; fd < max; ++fd) ::close(static_cast<int>(fd));
  }
  for (int fd = 3; fd < s; ++fd) ::close(fd);
  return s;
}

[[noreturn]] void GuardMain(int sock, const GuardConfig& config, std::string_view entry) {
  sigset_t all;
  sigfillset(&all);
  ::sigprocmask(SIG_SETMASK, &all, nullptr);  // nothing but SIGKILL and SIGSTOP reaches it
  ::setpgid(0, 0);
  ::prctl(PR_SET_NAME, "ferry-guard", 0, 0, 0);
  if (::chdir("/") != 0) {
    // Harmless: it only keeps ferry's working directory busy.
  }
  sock = SettleDescriptors(sock);

  pid_t group = 0;  // the command's process group; 0 while unknown or once gone
  bool known = false;
  std::optional<Clock::time_point> stop_at;
  bool group_killed = false;
  while (true) {
    pollfd p{.fd = sock, .events = POLLIN, .revents = 0};
    int ready =
        ::poll(&p, 1, group != 0 ? static_cast<int>(kGroupCheck.count()) : -1 /* no timeout */);
    if (ready < 0 && errno != EINTR) break;
    if (ready > 0) {
      char msg[kMessageSize];
      ssize_t n = ::recv(sock, msg, sizeof msg, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;  // ferry's end closed: ferry is gone
      if (msg[0] == kRelease) ::_exit(0);
      if (msg[0] == kStopForwarded && !stop_at) stop_at = Clock::now();
      if (msg[0] == kGroupKilled) group_killed = true;
      if (msg[0] == kCommand && !known && static_cast<size_t>(n) == kMessageSize) {
        std::memcpy(&group, msg + 1, sizeof group);
        known = group > 0;
        if (!known) group = 0;
      }
    }
    if (group != 0 && Gone(group)) group = 0;
  }
  if (!known) ::_exit(0);  // ferry died before it started the command

  // Ferry is gone: stop the command as ferry would have.
  const Clock::time_point deadline = stop_at.value_or(Clock::now()) + config.grace;
  GuardView view{.signal_group = config.signal_group,
                 .stop_forwarded = stop_at.has_value(),
                 .group_killed = group_killed};
  while (true) {
    if (group != 0 && Gone(group)) group = 0;
    Seen seen = config.scan_proc ? ScanProc(group, entry, 0) : ProbeGroup(group);
    const auto now = Clock::now();
    view.past_deadline = now >= deadline;
    view.past_give_up = now >= deadline + kGiveUp;
    view.main_alive = seen.main_alive;
    view.rest_alive = seen.rest_alive;
    GuardActions act = DecideGuard(view);
    if (act.exit) ::_exit(0);
    if (act.term_main && group != 0) ::kill(group, SIGTERM);
    view.main_termed = view.main_termed || act.term_main;
    if (act.term_rest || act.kill_all) {
      int sig = act.kill_all ? SIGKILL : SIGTERM;
      if (group != 0) {
        ::kill(-group, sig);
        if (sig == SIGTERM) ::kill(-group, SIGCONT);
      }
      if (config.scan_proc) ScanProc(group, entry, sig);
    }
    view.rest_termed = view.rest_termed || act.term_rest;
    timespec pause{0, static_cast<long>(std::chrono::nanoseconds(kStopPoll).count())};
    ::nanosleep(&pause, nullptr);
  }
}

}  // namespace

GuardActions DecideGuard(const GuardView& v) {
  if ((!v.main_alive && !v.rest_alive) || v.past_give_up) return {.exit = true};
  if (v.group_killed || v.past_deadline) return {.kill_all = true};
  GuardActions a;
  if (v.signal_group) {
    // Everything at once (the group holds the main process), unless ferry already did it.
    a.term_rest = !v.stop_forwarded && !v.rest_termed;
  } else {
    // The main process first, so what it started keeps serving it while it saves; the rest
    // once it has ended.
    a.term_main = v.main_alive && !v.stop_forwarded && !v.main_termed;
    a.term_rest = !v.main_alive && !v.rest_termed;
  }
  return a;
}

bool EnvironEntryMatcher::Feed(std::string_view chunk) {
  for (char c : chunk) {
    if (found_) break;
    if (c == '\0') {
      found_ = still_matching_ && matched_ == entry_.size();
      matched_ = 0;
      still_matching_ = true;
    } else if (still_matching_ && matched_ < entry_.size() && c == entry_[matched_]) {
      ++matched_;
    } else {
      still_matching_ = false;
    }
  }
  return found_;
}

Result<std::unique_ptr<RunGuard>> RunGuard::Start(const GuardConfig& config) {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
    return ErrnoToStatus(errno, "create the guard's socket pair");
  }
  // Built before the fork: the guard allocates nothing.
  const std::string entry = std::string(kGuardTokenVariable) + "=" + config.token;
  pid_t pid = ::fork();
  if (pid < 0) {
    int err = errno;
    ::close(sv[0]);
    ::close(sv[1]);
    return ErrnoToStatus(err, "start the guard process");
  }
  if (pid == 0) GuardMain(sv[1], config, entry);
  ::close(sv[1]);
  return std::unique_ptr<RunGuard>(new RunGuard(pid, sv[0]));
}

RunGuard::~RunGuard() {
  if (fd_ >= 0) ::close(fd_);
}

void RunGuard::Send(char kind, pid_t pid) {
  if (fd_ < 0) return;
  char msg[kMessageSize];
  Encode(kind, pid, msg);
  // Never blocks, never raises SIGPIPE: a guard that is gone is no reason to stop ferry.
  ::send(fd_, msg, sizeof msg, MSG_NOSIGNAL | MSG_DONTWAIT);
}

void RunGuard::NoteCommand(pid_t pid) { Send(kCommand, pid); }
void RunGuard::NoteStopForwarded() { Send(kStopForwarded); }
void RunGuard::NoteGroupKilled() { Send(kGroupKilled); }

void RunGuard::Release() {
  if (released_) return;
  Send(kRelease);
  released_ = true;
  ::close(fd_);
  fd_ = -1;
  const auto until = Clock::now() + kReapWait;
  while (Clock::now() < until) {
    // Not ours to reap any more (0 = still running; -1 = reaped elsewhere, e.g. with orphans).
    if (::waitpid(pid_, nullptr, WNOHANG) != 0) return;
    std::this_thread::sleep_for(milliseconds(1));
  }
}

void TellGuardCommandStarted(int fd) {
  char msg[kMessageSize];
  Encode(kCommand, ::getpid(), msg);
  ::send(fd, msg, sizeof msg, MSG_NOSIGNAL | MSG_DONTWAIT);
}

std::string NewGuardToken() {
  std::random_device rd;
  std::array<uint8_t, 16> bytes;
  for (auto& b : bytes) b = static_cast<uint8_t>(rd());
  return HexEncode(bytes);
}

}  // namespace ferry::job
