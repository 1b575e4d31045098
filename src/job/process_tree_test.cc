#include "job/process_tree.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace ferry::job {
namespace {

using Clock = std::chrono::steady_clock;

std::vector<pid_t> Pids(const std::vector<ProcEntry>& entries) {
  std::vector<pid_t> out;
  for (const auto& e : entries) out.push_back(e.pid);
  return out;
}

TEST(ProcStat, ParsesFieldsAfterTheLastParenthesis) {
  auto e = ParseProcStat("4242 (python3) S 17 4242 4242 0 -1 4194560 1234 0 0 0\n");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->pid, 4242);
  EXPECT_EQ(e->ppid, 17);
  EXPECT_EQ(e->pgid, 4242);
  EXPECT_EQ(e->state, 'S');
  // A command name may hold spaces and parentheses of its own.
  e = ParseProcStat("7 (a) Z (b) x) Z 1 5 5 0");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->pid, 7);
  EXPECT_EQ(e->ppid, 1);
  EXPECT_EQ(e->pgid, 5);
  EXPECT_EQ(e->state, 'Z');
  EXPECT_FALSE(ParseProcStat(""));
  EXPECT_FALSE(ParseProcStat("12 (cut"));
  EXPECT_FALSE(ParseProcStat("12 (x) S"));
}

TEST(Descendants, FollowsParentChainsParentsFirstAndWalksThroughZombies) {
  std::vector<ProcEntry> table = {
      {.pid = 1, .ppid = 0, .pgid = 1, .state = 'S'},
      {.pid = 100, .ppid = 1, .pgid = 100, .state = 'S'},    // ferry
      {.pid = 101, .ppid = 100, .pgid = 101, .state = 'S'},  // the command
      {.pid = 102, .ppid = 101, .pgid = 101, .state = 'R'},  // its worker
      {.pid = 103, .ppid = 100, .pgid = 103, .state = 'S'},  // setsid daemon, re-parented
      {.pid = 104, .ppid = 103, .pgid = 103, .state = 'Z'},  // exited, not yet reaped
      {.pid = 105, .ppid = 104, .pgid = 103, .state = 'D'},  // under the zombie (table race)
      {.pid = 200, .ppid = 1, .pgid = 200, .state = 'S'},    // someone else's
      {.pid = 201, .ppid = 200, .pgid = 200, .state = 'S'},
  };
  EXPECT_EQ(Pids(Descendants(100, table)), (std::vector<pid_t>{101, 103, 102, 105}));
  EXPECT_EQ(Pids(Descendants(103, table)), (std::vector<pid_t>{105}));
  EXPECT_TRUE(Descendants(201, table).empty());
  EXPECT_TRUE(Descendants(999, table).empty());
  // A cycle (a table read across pid reuse) does not loop.
  std::vector<ProcEntry> cycle = {{.pid = 5, .ppid = 6, .pgid = 5, .state = 'S'},
                                  {.pid = 6, .ppid = 5, .pgid = 5, .state = 'S'}};
  EXPECT_EQ(Pids(Descendants(5, cycle)), (std::vector<pid_t>{6}));
}

TEST(ProcTable, OnlyAProcOfOurPidNamespaceIsTrusted) {
  EXPECT_TRUE(ProcShowsThisProcess());
  auto root = std::filesystem::temp_directory_path() / ("ferry-ns-" + std::to_string(getpid()));
  std::filesystem::remove_all(root);
  std::filesystem::create_directories(root / "1");
  std::filesystem::create_directory_symlink("1", root / "self");  // we would be pid 1 there
  EXPECT_FALSE(ProcShowsThisProcess(root.string()));
  EXPECT_FALSE(ProcShowsThisProcess((root / "missing").string()));
  std::filesystem::remove_all(root);
}

TEST(ProcTable, ReadsAFakeProcTreeAndIgnoresWhatIsNotAProcess) {
  auto root = std::filesystem::temp_directory_path() / ("ferry-proc-" + std::to_string(getpid()));
  std::filesystem::remove_all(root);
  auto add = [&](const std::string& name, const std::string& stat) {
    std::filesystem::create_directories(root / name);
    std::ofstream(root / name / "stat") << stat;
  };
  add("1", "1 (init) S 0 1 1 0");
  add("30", "30 (ferry) S 1 30 30 0");
  add("31", "31 (my job (v2)) S 30 31 31 0");
  add("32", "");  // exited while the table was read
  // Unreadable (a read error, like ESRCH for a process that is exiting): left out, no exception.
  std::filesystem::create_directories(root / "33" / "stat");
  add("self", "30 (ferry) S 1 30 30 0");
  std::filesystem::create_directories(root / "sys");
  auto table = ReadProcTable(root.string());
  std::sort(table.begin(), table.end(), [](auto& a, auto& b) { return a.pid < b.pid; });
  EXPECT_EQ(Pids(table), (std::vector<pid_t>{1, 30, 31}));
  EXPECT_EQ(Pids(Descendants(30, table)), (std::vector<pid_t>{31}));
  EXPECT_TRUE(ReadProcTable((root / "missing").string()).empty());
  std::filesystem::remove_all(root);
}

// Forks a child that starts a grandchild in a new session (setsid) and exits, the way a daemon
// escapes its parent's process group. Returns the grandchild's pid once the child has exited
// (so the grandchild has been re-parented). Only async-signal-safe calls after fork().
pid_t StartEscapedGrandchild(bool ignore_sigterm) {
  int fds[2];
  if (::pipe(fds) != 0) return -1;
  pid_t child = ::fork();
  if (child == 0) {
    ::close(fds[0]);
    pid_t grandchild = ::fork();
    if (grandchild == 0) {
      ::setsid();
      if (ignore_sigterm) ::signal(SIGTERM, SIG_IGN);
      pid_t self = ::getpid();
      if (::write(fds[1], &self, sizeof self) != sizeof self) ::_exit(1);
      ::close(fds[1]);
      for (int i = 0; i < 600; ++i) ::usleep(50000);  // bounded: 30 s at most
      ::_exit(0);
    }
    ::_exit(grandchild > 0 ? 0 : 1);
  }
  ::close(fds[1]);
  pid_t grandchild = -1;
  if (::read(fds[0], &grandchild, sizeof grandchild) != sizeof grandchild) grandchild = -1;
  ::close(fds[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  return grandchild;
}

bool Running(pid_t pid) {
  for (const auto& e : ReadProcTable()) {
    if (e.pid == pid) return e.state != 'Z' && e.state != 'X';
  }
  return false;
}

class SubreaperTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(BecomeSubreaper()) << std::strerror(errno); }
};

TEST_F(SubreaperTest, EscapedGrandchildIsReparentedFoundAndStoppedWithSigterm) {
  pid_t grandchild = StartEscapedGrandchild(false);
  ASSERT_GT(grandchild, 0);
  auto below = Descendants(getpid(), ReadProcTable());
  auto it = std::find_if(below.begin(), below.end(), [&](auto& e) { return e.pid == grandchild; });
  ASSERT_NE(it, below.end()) << "the setsid grandchild is not below us";
  EXPECT_EQ(it->ppid, getpid());    // re-parented to the subreaper, not to init
  EXPECT_EQ(it->pgid, grandchild);  // in its own session and group

  auto start = Clock::now();
  LeftoverReport r = StopLeftovers(Clock::now() + std::chrono::seconds(10));
  EXPECT_EQ(r.found, std::vector<pid_t>{grandchild});
  EXPECT_EQ(r.started_meanwhile, 0);
  EXPECT_EQ(r.killed, 0);
  EXPECT_TRUE(r.alive.empty());
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(5));  // did not wait for the deadline
  EXPECT_FALSE(Running(grandchild));
  EXPECT_EQ(::kill(grandchild, 0), -1);  // reaped: not even a zombie is left
}

TEST_F(SubreaperTest, GrandchildIgnoringSigtermIsKilledAtTheDeadline) {
  pid_t grandchild = StartEscapedGrandchild(true);
  ASSERT_GT(grandchild, 0);
  auto start = Clock::now();
  LeftoverReport r = StopLeftovers(Clock::now() + std::chrono::milliseconds(300));
  EXPECT_GE(Clock::now() - start, std::chrono::milliseconds(300));
  EXPECT_EQ(r.found, std::vector<pid_t>{grandchild});
  EXPECT_EQ(r.started_meanwhile, 0);
  EXPECT_EQ(r.killed, 1);
  EXPECT_TRUE(r.alive.empty());
  EXPECT_EQ(::kill(grandchild, 0), -1);
}

TEST_F(SubreaperTest, NothingLeftIsNothingToDo) {
  LeftoverReport r = StopLeftovers(Clock::now());
  EXPECT_TRUE(r.found.empty());
  EXPECT_EQ(r.killed, 0);
}

}  // namespace
}  // namespace ferry::job
