#include "job/process_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <map>
#include <set>
#include <thread>

namespace ferry::job {

namespace {

using Clock = std::chrono::steady_clock;

// How often StopLeftovers looks at the process table while it waits: short enough that a
// well-behaved process's exit is noticed at once, long enough to leave the CPU to it.
constexpr auto kPollInterval = std::chrono::milliseconds(20);

std::optional<long> NextNumber(std::string_view& rest) {
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  long value = 0;
  auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), value);
  if (ec != std::errc() || end == rest.data()) return std::nullopt;
  rest.remove_prefix(static_cast<size_t>(end - rest.data()));
  return value;
}

bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool Alive(const ProcEntry& e) { return e.state != 'Z' && e.state != 'X'; }

// A /proc/<pid>/stat file; "" when it cannot be read. Plain read(2): reading the file of a
// process that is exiting fails with ESRCH, and std::ifstream turns a read error into an
// exception (libstdc++), which would end ferry in the middle of stopping leftovers.
std::string ReadStat(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string text;
  char buf[1024];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) text.clear();
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return text;
}

}  // namespace

std::optional<ProcEntry> ParseProcStat(std::string_view text) {
  size_t open = text.find('(');
  size_t close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    return std::nullopt;
  }
  std::string_view head = text.substr(0, open);
  auto pid = NextNumber(head);
  std::string_view rest = text.substr(close + 1);
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  if (rest.empty()) return std::nullopt;
  char state = rest.front();
  rest.remove_prefix(1);
  auto ppid = NextNumber(rest);
  auto pgid = NextNumber(rest);
  if (!pid || !ppid || !pgid) return std::nullopt;
  return ProcEntry{.pid = static_cast<pid_t>(*pid),
                   .ppid = static_cast<pid_t>(*ppid),
                   .pgid = static_cast<pid_t>(*pgid),
                   .state = state};
}

std::vector<ProcEntry> ReadProcTable(const std::string& proc_root) {
  std::vector<ProcEntry> table;
  DIR* d = ::opendir(proc_root.c_str());
  if (d == nullptr) return table;
  while (dirent* e = ::readdir(d)) {
    if (!AllDigits(e->d_name)) continue;
    // Empty or unreadable (ESRCH): it exited while the table was read.
    if (auto entry = ParseProcStat(ReadStat(proc_root + "/" + e->d_name + "/stat"))) {
      table.push_back(*entry);
    }
  }
  ::closedir(d);
  return table;
}

std::vector<ProcEntry> Descendants(pid_t root, const std::vector<ProcEntry>& table) {
  std::multimap<pid_t, const ProcEntry*> children;
  for (const auto& e : table) {
    if (e.pid != e.ppid) children.emplace(e.ppid, &e);
  }
  std::vector<ProcEntry> out;
  std::vector<pid_t> queue = {root};
  std::set<pid_t> seen = {root};
  // Breadth first: parents come before their children. `seen` guards against a table read
  // across a pid reuse that would otherwise form a cycle.
  for (size_t i = 0; i < queue.size(); ++i) {
    auto [begin, end] = children.equal_range(queue[i]);
    for (auto it = begin; it != end; ++it) {
      const ProcEntry& child = *it->second;
      if (!seen.insert(child.pid).second) continue;
      queue.push_back(child.pid);
      if (Alive(child)) out.push_back(child);
    }
  }
  return out;
}

bool BecomeSubreaper() { return ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0; }

bool ProcShowsThisProcess(const std::string& proc_root) {
  char buf[32];
  ssize_t n = ::readlink((proc_root + "/self").c_str(), buf, sizeof buf - 1);
  if (n <= 0) return false;
  return std::string_view(buf, static_cast<size_t>(n)) == std::to_string(::getpid());
}

int ReapExitedChildren(pid_t watched, std::optional<int>* watched_status) {
  int reaped = 0;
  // Bounded: there cannot be more exited children than this at once in practice, and a later
  // call picks up the rest.
  for (int i = 0; i < 4096; ++i) {
    int status = 0;
    pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid <= 0) break;
    ++reaped;
    if (pid == watched && watched_status) *watched_status = status;
  }
  return reaped;
}

LeftoverReport StopLeftovers(Clock::time_point kill_at, std::chrono::milliseconds give_up_after,
                             const std::string& proc_root, pid_t spare) {
  LeftoverReport report;
  const pid_t self = ::getpid();
  std::set<pid_t> found, termed, killed;
  bool first_round = true;
  // Each round re-reads the table: a process may fork while we signal its siblings, and what
  // its parent leaves behind is re-parented here when that parent dies. A pid is signalled only
  // while the table shows it below us; between reading the table and kill() a grandchild (not
  // ours to reap) could exit and its pid be reused, a window of microseconds we accept.
  while (true) {
    ReapExitedChildren(-1, nullptr);
    std::vector<ProcEntry> live = Descendants(self, ReadProcTable(proc_root));
    std::erase_if(live, [spare](const ProcEntry& e) { return e.pid == spare; });
    if (live.empty()) break;
    auto now = Clock::now();
    for (const auto& e : live) {
      if (first_round) {
        found.insert(e.pid);
        report.found.push_back(e.pid);
      } else if (!found.contains(e.pid) && !termed.contains(e.pid) && !killed.contains(e.pid)) {
        ++report.started_meanwhile;
      }
      if (now < kill_at) {
        if (termed.insert(e.pid).second) {
          ::kill(e.pid, SIGTERM);
          ::kill(e.pid, SIGCONT);  // a stopped process would hold SIGTERM until continued
        }
      } else {
        if (killed.insert(e.pid).second && found.contains(e.pid)) ++report.killed;
        ::kill(e.pid, SIGKILL);
      }
    }
    first_round = false;
    if (now >= kill_at + give_up_after) {
      for (const auto& e : live) report.alive.push_back(e.pid);
      break;
    }
    std::this_thread::sleep_for(kPollInterval);
  }
  return report;
}

}  // namespace ferry::job
