#pragma once
// The guard: a small process that stops the command when ferry itself dies (SIGKILL, the OOM
// killer, a crash), so a training process tree is never left running orphaned, with no more
// syncs (issue 12). docs/semantics/run.md, "If ferry is killed", is the contract.
//
// How ferry's death is seen. Before it forks the command, ferry forks the guard (no exec: the
// guard runs GuardMain below, async-signal-safe code only, as a child of a multithreaded process
// must). The two share a SOCK_SEQPACKET socket pair; ferry's end is close-on-exec, so only ferry
// holds it once the command has exec'd. The kernel closes it when ferry's process dies, of any
// cause, so the guard reads end-of-file exactly then. (PR_SET_PDEATHSIG on the guard would fire
// on the death of the *thread* that forked it, and would miss a parent that died before the
// prctl; the socket has neither problem.) The guard runs in a process group of its own (a signal
// to ferry's group or to the command's does not reach it), blocks every signal it can, has
// /dev/null as stdin/stdout/stderr and no other descriptor (a caller reading ferry's output is
// never kept waiting by it), and sits in "/" (it keeps no mount busy).
//
// Messages (GuardMessage): the command's pid, which is its process group G (sent by the
// command's child itself between fork and exec, so a ferry that dies right after the fork is
// still covered, and again by ferry); "stop forwarded" (ferry sent SIGTERM: the grace period runs
// from now); "group killed" (ferry sent SIGKILL at the end of the grace period); "release"
// (ferry is done with the command's processes: exit).
//
// While ferry lives the guard only checks, every 200 ms, whether G still exists (kill(-G, 0)).
// The kernel does not reuse a number while a process group of that id has members, so G names
// the command's group until the guard sees it gone; from then on it never signals G again.
//
// When ferry has died, the guard does what ferry would have done (DecideGuard): SIGTERM to the
// main process (with signal_group: to the group and the escaped processes), unless ferry had
// already sent it; once the main process has ended, SIGTERM and SIGCONT to the rest of the group
// and to the escaped processes; SIGKILL to all of them when the grace period ends (counted from
// ferry's stop signal, else from ferry's death); then it exits, once none is left or 5 s after
// SIGKILL (a process in uninterruptible sleep cannot be killed).
//
// Escaped processes (those that left G: setsid, a daemon's double fork) are found by a token:
// the command's environment holds FERRY_GUARD_TOKEN=<128 random bits>, and the guard signals
// every process outside G whose initial environment (/proc/PID/environ) holds that entry. Only
// where /proc shows ferry's pid namespace (GuardConfig::scan_proc). Not covered: an escaped
// process started with another environment (env -i, sudo, some daemons); processes others start
// for the command (ssh, docker, systemd-run: not below ferry at all); a guard that is itself
// SIGKILLed or SIGSTOPped.
//
// Not thread-safe: RunGuard is used from the thread that starts and supervises the command.

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"

namespace ferry::job {

inline constexpr std::string_view kGuardTokenVariable = "FERRY_GUARD_TOKEN";

struct GuardConfig {
  std::chrono::milliseconds grace{30'000};
  bool signal_group = false;  // SIGTERM to the whole group (and the escaped processes) at once
  bool scan_proc = false;     // /proc is of ferry's pid namespace: escaped processes can be found
  std::string token;          // the value of FERRY_GUARD_TOKEN in the command's environment
};

// Ferry's side of a running guard.
class RunGuard final {
 public:
  // Forks the guard. Errors: the socket pair or the fork failed (the caller runs without one).
  static Result<std::unique_ptr<RunGuard>> Start(const GuardConfig& config);

  // Closes ferry's end. Unless Release() came first, the guard takes that as ferry's death and
  // stops the command.
  ~RunGuard();
  RunGuard(const RunGuard&) = delete;
  RunGuard& operator=(const RunGuard&) = delete;

  pid_t pid() const { return pid_; }
  // Ferry's end of the socket: the command's child tells the guard its pid through it before it
  // execs (TellGuardCommandStarted). Close-on-exec.
  int fd() const { return fd_; }

  void NoteCommand(pid_t pid);
  void NoteStopForwarded();
  void NoteGroupKilled();
  // Ferry is done with the command's processes: the guard exits (reaped here when it does so
  // within a second; else by whoever inherits it).
  void Release();

 private:
  RunGuard(pid_t pid, int fd) : pid_(pid), fd_(fd) {}
  void Send(char kind, pid_t pid = 0);

  pid_t pid_;
  int fd_;
  bool released_ = false;
};

// For the command's child between fork and exec: sends its own pid on `fd`. Async-signal-safe.
void TellGuardCommandStarted(int fd);

// A random token for FERRY_GUARD_TOKEN (32 hex digits).
std::string NewGuardToken();

// --- The guard's decisions, pure so they are unit-tested ------------------------------------

// What the guard knows once ferry has died.
struct GuardView {
  bool signal_group = false;
  bool stop_forwarded = false;  // ferry had sent SIGTERM before it died
  bool group_killed = false;    // ferry had sent SIGKILL to the group
  bool past_deadline = false;   // the grace period is over
  bool past_give_up = false;    // 5 s after the grace period
  bool main_alive = false;      // the command's main process (not a zombie)
  bool rest_alive = false;      // another member of its group, or an escaped process
  bool main_termed = false;     // the guard sent the main process SIGTERM
  bool rest_termed = false;     // the guard sent the rest SIGTERM
};

struct GuardActions {
  bool term_main = false;  // SIGTERM to the main process
  bool term_rest = false;  // SIGTERM and SIGCONT to the group and to the escaped processes
  bool kill_all = false;   // SIGKILL to the group and to the escaped processes
  bool exit = false;
};

GuardActions DecideGuard(const GuardView& view);

// Whether a NUL-separated environment block (/proc/PID/environ, read in chunks of any size)
// holds exactly the entry it was made with.
class EnvironEntryMatcher {
 public:
  explicit EnvironEntryMatcher(std::string_view entry) : entry_(entry) {}
  // Feeds the next chunk; true once a whole matching entry has been seen.
  bool Feed(std::string_view chunk);
  bool found() const { return found_; }

 private:
  std::string_view entry_;
  size_t matched_ = 0;
  bool still_matching_ = true;
  bool found_ = false;
};

}  // namespace ferry::job
