// The real RunSystem with real signals and processes: the thin layer under the lifecycle.
#include "job/run_system_posix.h"

#include <gtest/gtest.h>

#include <thread>

namespace ferry::job {
namespace {

using std::chrono::milliseconds;

// Waits (at most 10 s) for `pid` to end.
std::optional<ProcessExit> AwaitExit(ProcessLauncher& launcher, pid_t pid) {
  for (int i = 0; i < 1000; ++i) {
    if (auto exit = launcher.ReapExited(pid)) return exit;
    std::this_thread::sleep_for(milliseconds(10));
  }
  return std::nullopt;
}

TEST(PosixSignalSource, HeldSignalsAreWaitedForAndALeftoverSyncRequestIsDropped) {
  {
    PosixSignalSource signals;
    EXPECT_EQ(signals.Wait(milliseconds(1)), 0);
    ::raise(SIGUSR1);  // held: pending, not delivered
    EXPECT_EQ(signals.Wait(milliseconds(1000)), SIGUSR1);
    EXPECT_EQ(signals.TakePendingStop(), 0);
    ::raise(SIGTERM);
    EXPECT_EQ(signals.TakePendingStop(), SIGTERM);
    EXPECT_EQ(signals.TakePendingStop(), 0);
    ::raise(SIGUSR1);  // still pending when the run ends
  }
  // Delivered now, SIGUSR1's default action would have ended this test process.
  sigset_t mask;
  ::sigprocmask(SIG_BLOCK, nullptr, &mask);
  EXPECT_FALSE(sigismember(&mask, SIGUSR1));
  EXPECT_FALSE(sigismember(&mask, SIGTERM));
}

TEST(PosixProcessLauncher, CommandRunsInItsOwnGroupWithTheVariablesAndUnblockedSignals) {
  PosixSignalSource signals;  // ferry holds SIGTERM; the command must not
  PosixProcessLauncher launcher(signals.original_mask());
  auto pid = launcher.Start(
      {"sh", "-c",
       "test \"$FERRY_X\" = 'a b' && test \"$(cut -d' ' -f5 /proc/$$/stat)\" = \"$$\" || exit 3"},
      {{"FERRY_X", "a b"}});
  ASSERT_TRUE(pid.ok()) << pid.status().message();
  auto exit = AwaitExit(launcher, *pid);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->signal, 0);
  EXPECT_EQ(exit->code, 0);

  pid = launcher.Start({"sleep", "30"}, {});
  ASSERT_TRUE(pid.ok());
  launcher.SignalGroup(*pid, SIGTERM);
  exit = AwaitExit(launcher, *pid);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->signal, SIGTERM);

  pid = launcher.Start({"ferry-test-no-such-command"}, {});
  ASSERT_TRUE(pid.ok());
  exit = AwaitExit(launcher, *pid);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->code, 127);
}

TEST(ThreadTaskRunner, CancelReachesTheWorkAndWaitJoinsIt) {
  ThreadTaskRunner runner;
  std::atomic<bool> saw_cancel{false};
  auto task = runner.Start([&](const std::atomic<bool>& cancel) {
    while (!cancel) std::this_thread::sleep_for(milliseconds(1));
    saw_cancel = true;
  });
  EXPECT_FALSE(task->Done());
  task->Cancel();
  task->Wait();
  EXPECT_TRUE(task->Done());
  EXPECT_TRUE(saw_cancel);
}

}  // namespace
}  // namespace ferry::job
