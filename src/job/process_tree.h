#pragma once
// The processes below ferry run, and stopping the ones a command leaves behind.
//
// ferry run makes itself a child subreaper (prctl PR_SET_CHILD_SUBREAPER) before it forks the
// command, so a process that leaves the command's process group or session (setsid, a daemon's
// double fork) is re-parented to ferry when its parent exits instead of to init. Every process
// the command started is therefore below ferry in the parent tree for as long as ferry lives.
// When the command has ended, `StopLeftovers` finds what is still running there (by the ppid
// chains in /proc/<pid>/stat), sends SIGTERM, waits until a deadline, sends SIGKILL, and reaps
// what was re-parented to ferry, so nothing keeps writing into the output directories during the
// final stage-out and nothing outlives the run.
//
// Not thread-safe: call from the thread that waits for the command (it reaps children).

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ferry::job {

// One line of the process table.
struct ProcEntry {
  pid_t pid = 0;
  pid_t ppid = 0;
  pid_t pgid = 0;
  char state = '?';  // 'Z' zombie, 'X' dead; everything else is alive
};

// Parses the text of /proc/<pid>/stat ("pid (comm) S ppid pgrp ..."). comm may hold spaces and
// parentheses, so the fields are read after the last ')'. nullopt when malformed.
std::optional<ProcEntry> ParseProcStat(std::string_view text);

// Every process under `proc_root` (a /proc mount, or a fake tree in tests). Processes that exit
// while the table is read are left out.
std::vector<ProcEntry> ReadProcTable(const std::string& proc_root = "/proc");

// The live (not zombie) descendants of `root` in `table`, parents before children. Zombies are
// walked through: a zombie's children are still descendants.
std::vector<ProcEntry> Descendants(pid_t root, const std::vector<ProcEntry>& table);

// Makes this process a child subreaper. Returns false (errno set) where the kernel refuses.
bool BecomeSubreaper();

// Whether `proc_root` shows this process under its own pid (/proc/self names getpid()). A /proc
// of another pid namespace (a container given the host's /proc) would make every pid in it
// someone else's: then nothing may be signalled by what it lists.
bool ProcShowsThisProcess(const std::string& proc_root = "/proc");

// Reaps every exited child of this process without blocking. When `watched` is among them its
// wait status goes to `*watched_status`. Returns how many were reaped.
int ReapExitedChildren(pid_t watched, std::optional<int>* watched_status);

// What StopLeftovers did.
struct LeftoverReport {
  std::vector<pid_t> found;   // alive below this process when StopLeftovers started
  int killed = 0;             // of `found`, how many were still alive at the deadline (SIGKILL)
  int started_meanwhile = 0;  // processes `found` started while being stopped (all stopped too)
  std::vector<pid_t> alive;   // still alive when StopLeftovers gave up (uninterruptible sleep)
};

// Stops every live descendant of this process but `spare` (ferry's guard, run_guard.h; 0 =
// none): SIGTERM at once (processes that appear later get it when found), until `kill_at` for
// them to exit, then SIGKILL, reaping what was re-parented here. Gives up `give_up_after` after
// `kill_at` (a process in uninterruptible sleep cannot be killed) and names what is left.
// `proc_root` is for tests.
LeftoverReport StopLeftovers(std::chrono::steady_clock::time_point kill_at,
                             std::chrono::milliseconds give_up_after = std::chrono::seconds(5),
                             const std::string& proc_root = "/proc", pid_t spare = 0);

}  // namespace ferry::job
