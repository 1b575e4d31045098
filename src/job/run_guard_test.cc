// The guard (run_guard.h): its decisions as a pure function, the environment matcher, and the
// real thing with real processes. A real test plays ferry in a child process that is SIGKILLed;
// the test process is a child subreaper, so the command and the guard are re-parented to it and
// every wait below is a blocking waitpid: no sleeps, no polling.
#include "job/run_guard.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "job/process_tree.h"
#include "job/run_system_posix.h"

namespace ferry::job {
namespace {

namespace fs = std::filesystem;

// --- DecideGuard ------------------------------------------------------------------------------

TEST(DecideGuard, MainProcessFirstThenTheRestThenSigkillAtTheDeadline) {
  GuardView v{.main_alive = true, .rest_alive = true};
  GuardActions a = DecideGuard(v);
  EXPECT_TRUE(a.term_main);
  EXPECT_FALSE(a.term_rest);  // DataLoader workers keep serving while it saves
  EXPECT_FALSE(a.kill_all);
  v.main_termed = true;
  a = DecideGuard(v);
  EXPECT_FALSE(a.term_main || a.term_rest || a.kill_all || a.exit);  // once only
  v.main_alive = false;                                              // it saved and exited
  a = DecideGuard(v);
  EXPECT_TRUE(a.term_rest);
  EXPECT_FALSE(a.term_main);
  v.rest_termed = true;
  EXPECT_FALSE(DecideGuard(v).term_rest);
  v.past_deadline = true;
  EXPECT_TRUE(DecideGuard(v).kill_all);
  v.rest_alive = false;
  EXPECT_TRUE(DecideGuard(v).exit);
}

TEST(DecideGuard, ASigtermFerryAlreadyForwardedIsNotSentAgain) {
  GuardView v{.stop_forwarded = true, .main_alive = true, .rest_alive = true};
  GuardActions a = DecideGuard(v);
  EXPECT_FALSE(a.term_main || a.term_rest || a.kill_all || a.exit);
  v.main_alive = false;
  EXPECT_TRUE(DecideGuard(v).term_rest);  // what it leaves behind is the guard's to stop
}

TEST(DecideGuard, SignalGroupTermsEverythingAtOnceUnlessFerryDid) {
  GuardView v{.signal_group = true, .main_alive = true, .rest_alive = true};
  GuardActions a = DecideGuard(v);
  EXPECT_TRUE(a.term_rest);  // the group holds the main process
  EXPECT_FALSE(a.term_main);
  v.rest_termed = true;
  a = DecideGuard(v);
  EXPECT_FALSE(a.term_main || a.term_rest || a.kill_all || a.exit);
  GuardView forwarded{.signal_group = true, .stop_forwarded = true, .main_alive = true};
  a = DecideGuard(forwarded);
  EXPECT_FALSE(a.term_main || a.term_rest || a.kill_all || a.exit);
}

TEST(DecideGuard, GroupKilledByFerryIsKilledAgainAndTheGuardGivesUpAfterAWhile) {
  GuardView v{.group_killed = true, .main_alive = true};
  EXPECT_TRUE(DecideGuard(v).kill_all);
  v.past_deadline = v.past_give_up = true;  // uninterruptible sleep: nothing more to do
  EXPECT_TRUE(DecideGuard(v).exit);
  EXPECT_TRUE(DecideGuard(GuardView{}).exit);  // nothing left at all
}

// --- EnvironEntryMatcher ----------------------------------------------------------------------

TEST(EnvironEntryMatcher, FindsTheWholeEntryInAnyChunkingAndNothingElse) {
  using namespace std::string_view_literals;
  const auto env = "A=1\0FERRY_GUARD_TOKEN=ab12\0Z=2\0"sv;
  for (size_t cut = 0; cut <= env.size(); ++cut) {
    EnvironEntryMatcher m("FERRY_GUARD_TOKEN=ab12");
    m.Feed(env.substr(0, cut));
    m.Feed(env.substr(cut));
    EXPECT_TRUE(m.found()) << "cut at " << cut;
  }
  EXPECT_TRUE(EnvironEntryMatcher("FERRY_GUARD_TOKEN=ab12").Feed("FERRY_GUARD_TOKEN=ab12\0"sv));
  EXPECT_FALSE(EnvironEntryMatcher("FERRY_GUARD_TOKEN=ab12").Feed("FERRY_GUARD_TOKEN=ab123\0"sv));
  EXPECT_FALSE(EnvironEntryMatcher("FERRY_GUARD_TOKEN=ab12").Feed("XFERRY_GUARD_TOKEN=ab12\0"sv));
  EXPECT_FALSE(EnvironEntryMatcher("FERRY_GUARD_TOKEN=ab12").Feed("FERRY_GUARD_TOKEN=ab1\0"sv));
  EXPECT_FALSE(EnvironEntryMatcher("FERRY_GUARD_TOKEN=ab12").Feed("FERRY_GUARD_TOKEN=ab12"sv));
}

TEST(NewGuardToken, Is128RandomBitsInHex) {
  std::string a = NewGuardToken(), b = NewGuardToken();
  EXPECT_EQ(a.size(), 32u);
  EXPECT_NE(a, b);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos);
}

// --- The real guard ---------------------------------------------------------------------------

int WaitStatus(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

class GuardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(BecomeSubreaper()) << std::strerror(errno);
    dir_ = fs::temp_directory_path() /
           ("ferry-guard-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  struct Orphans {
    pid_t ferry = -1, command = -1, guard = -1, started = -1;
  };

  // Plays ferry in a child process: starts `script` under a PosixProcessLauncher (a tracking
  // one, like ferry run's), waits until the script wrote the pid of what it started to fd 9,
  // optionally forwards a stop signal, and is SIGKILLed. Returns who is left behind, all of them
  // now children of this (subreaper) process. Only this test's thread exists at the fork.
  Orphans StartThenKillFerry(const std::string& script, StopPolicy policy, bool forward_stop) {
    int report[2];
    if (::pipe(report) != 0) return {};
    pid_t ferry = ::fork();
    if (ferry == 0) {
      ::close(report[0]);
      // The script writes to fd 9; ferry reads a copy far from it.
      int ready[2];
      if (::pipe(ready) != 0) ::_exit(1);
      const int from_script = ::fcntl(ready[0], F_DUPFD_CLOEXEC, 10);
      if (from_script < 0 || ::dup2(ready[1], 9) != 9) ::_exit(1);
      ::close(ready[0]);
      if (ready[1] != 9) ::close(ready[1]);
      PassDescriptorToCommands(9);  // as if ferry's caller had handed it down
      sigset_t none;
      sigemptyset(&none);
      PosixProcessLauncher launcher(none, policy);
      if (!launcher.TrackDescendants().ok()) ::_exit(1);
      auto pid = launcher.Start({"/bin/sh", "-c", script}, {});
      if (!pid.ok()) ::_exit(1);
      ::close(9);
      char line[32] = {0};
      size_t got = 0;
      while (got + 1 < sizeof line && ::read(from_script, line + got, 1) == 1 &&
             line[got] != '\n') {
        ++got;
      }
      if (forward_stop) launcher.Signal(*pid, SIGTERM);
      pid_t pids[3] = {*pid, launcher.guard_pid(), static_cast<pid_t>(std::atoi(line))};
      if (::write(report[1], pids, sizeof pids) != sizeof pids) ::_exit(1);
      ::raise(SIGKILL);  // no destructor, no goodbye: as when ferry is SIGKILLed
    }
    ::close(report[1]);
    Orphans o{.ferry = ferry};
    pid_t pids[3];
    if (::read(report[0], pids, sizeof pids) == sizeof pids) {
      o.command = pids[0];
      o.guard = pids[1];
      o.started = pids[2];
    }
    ::close(report[0]);
    int status = WaitStatus(ferry);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    return o;
  }

  std::string Read(const fs::path& p) {
    std::ifstream in(p);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  fs::path dir_;
};

TEST_F(GuardTest, FerryKilledMeansSigtermToTheMainProcessFirstThenToWhatItLeftRunning) {
  // The main process checks, when its SIGTERM comes, that its background job still runs (a
  // DataLoader worker must keep serving while the checkpoint is saved), then exits 0.
  const fs::path saved = dir_ / "saved";
  std::string script = "sleep 1000 & S=$!; trap 'kill -0 $S && echo worker-alive > " +
                       saved.string() + "; exit 0' TERM; echo $S >&9; wait";
  Orphans o = StartThenKillFerry(script, {.grace = std::chrono::seconds(30)}, false);
  ASSERT_GT(o.command, 0);
  ASSERT_GT(o.guard, 0);
  ASSERT_GT(o.started, 0);
  int status = WaitStatus(o.command);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_EQ(Read(saved), "worker-alive\n");
  status = WaitStatus(o.started);  // then the rest of the group: long before the grace period
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << status;
  status = WaitStatus(o.guard);  // nothing left: the guard is done
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

TEST_F(GuardTest, CommandIgnoringSigtermIsKilledWithItsGroupWhenTheGracePeriodEnds) {
  std::string script = "trap '' TERM; sleep 1000 & echo $! >&9; wait";
  Orphans o = StartThenKillFerry(script, {.grace = std::chrono::seconds(0)}, true);
  ASSERT_GT(o.command, 0);
  int status = WaitStatus(o.command);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
  status = WaitStatus(o.started);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
  status = WaitStatus(o.guard);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

TEST_F(GuardTest, ProcessThatLeftTheGroupIsFoundByItsTokenAndStopped) {
  // setsid: its own session and group, out of reach of any signal to the command's group.
  std::string script = "setsid sleep 1000 & echo $! >&9; wait";
  Orphans o = StartThenKillFerry(script, {.grace = std::chrono::seconds(30)}, false);
  ASSERT_GT(o.started, 0);
  int status = WaitStatus(o.command);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << status;
  status = WaitStatus(o.started);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << status;
  status = WaitStatus(o.guard);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

TEST_F(GuardTest, GuardKeepsNoDescriptorOfFerrysAndExitsWhenReleased) {
  // A close-on-exec pipe: the command drops its copy at exec, the guard must close its own (a
  // pipe of a caller reading ferry's output would otherwise stay open as long as the guard).
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  sigset_t none;
  sigemptyset(&none);
  pid_t guard = 0;
  {
    PosixProcessLauncher launcher(none);
    auto pid = launcher.Start({"sleep", "30"}, {});
    ASSERT_TRUE(pid.ok());
    guard = launcher.guard_pid();
    ASSERT_GT(guard, 0);
    ::close(fds[1]);
    char c;
    EXPECT_EQ(::read(fds[0], &c, 1), 0);  // end of file: nobody else holds the write end
    ::close(fds[0]);
    std::vector<std::string> open_fds;
    for (const auto& e : fs::directory_iterator("/proc/" + std::to_string(guard) + "/fd")) {
      open_fds.push_back(e.path().filename().string() + "->" + fs::read_symlink(e.path()).string());
    }
    std::sort(open_fds.begin(), open_fds.end());
    ASSERT_EQ(open_fds.size(), 4u);
    EXPECT_EQ(open_fds[0], "0->/dev/null");
    EXPECT_EQ(open_fds[1], "1->/dev/null");
    EXPECT_EQ(open_fds[2], "2->/dev/null");
    EXPECT_EQ(open_fds[3].rfind("3->socket:", 0), 0u) << open_fds[3];
    launcher.SignalGroup(*pid, SIGKILL);
    siginfo_t info{};
    ASSERT_EQ(::waitid(P_PID, static_cast<id_t>(*pid), &info, WEXITED | WNOWAIT), 0);
    ASSERT_TRUE(launcher.ReapExited(*pid));
  }  // done with a command that was reaped: the guard is released and reaped
  EXPECT_EQ(::waitpid(guard, nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
}

}  // namespace
}  // namespace ferry::job
