// The `ferry run` lifecycle on fakes (run_system_test_util.h): every time below is fake, so
// these tests neither start processes nor sleep. Times are since the fake's start.
#include "job/lifecycle.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "job/run_system_test_util.h"

namespace ferry::job {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::FakeClock;
using testing::FakeProcessLauncher;
using testing::FakeRunWork;
using testing::FakeSignalSource;
using testing::FakeTaskRunner;

constexpr pid_t kPid = FakeProcessLauncher::kPid;
constexpr auto kForever = FakeTaskRunner::kUntilCancelled;

std::vector<SyncKind> Kinds(const FakeRunWork& work) {
  std::vector<SyncKind> out;
  for (const auto& s : work.syncs) out.push_back(s.kind);
  return out;
}

std::vector<milliseconds> Starts(const FakeTaskRunner& tasks) {
  std::vector<milliseconds> out;
  for (const auto& r : tasks.records) out.push_back(r->started);
  return out;
}

class LifecycleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("ferry-lifecycle-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    plan_.options.command = {"python", "train.py"};
    plan_.options.interval = seconds(300);
    plan_.options.grace = seconds(30);
    plan_.options.trigger_file = trigger();
    plan_.id.job = "job-1";
    plan_.outputs = {{(dir_ / "out").string(), "s3://b/out/", "s3://b/out/"}};
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string trigger() const { return (dir_ / "sync-now").string(); }
  std::string failed() const { return trigger() + ".failed"; }
  void Touch(const std::string& path) { std::ofstream(path) << ""; }

  RunOutcome Run(const PreflightObserver& observer = {}) {
    RunLifecycle lifecycle(plan_, {clock_, signals_, processes_, tasks_}, work_);
    RunOutcome outcome = lifecycle.Run(observer);
    child_ = lifecycle.child();
    ran_plan_ = lifecycle.plan();
    return outcome;
  }

  fs::path dir_;
  RunPlan plan_;
  FakeClock clock_;
  FakeSignalSource signals_{clock_};
  FakeProcessLauncher processes_{clock_, signals_};
  FakeTaskRunner tasks_{clock_};
  FakeRunWork work_;
  ChildState child_;
  RunPlan ran_plan_;  // the plan as the phases left it
};

TEST_F(LifecycleTest, CommandThatExitsGetsAFinalStageOutAndItsStatus) {
  processes_.exits_at = seconds(5);
  processes_.exit = {.code = 3};
  RunOutcome out = Run();
  EXPECT_EQ(out.exit_code, 3);
  EXPECT_TRUE(out.error.ok());
  EXPECT_EQ(processes_.argv, plan_.options.command);
  EXPECT_EQ(Kinds(work_), std::vector<SyncKind>{SyncKind::kFinal});
  EXPECT_EQ(work_.syncs[0].child.how, "exited 3");
  EXPECT_FALSE(work_.syncs[0].child.running);
  EXPECT_EQ(Starts(tasks_), std::vector<milliseconds>{seconds(5)});  // at once, not at a poll
  EXPECT_TRUE(processes_.sent.empty());
  EXPECT_TRUE(fs::is_directory(dir_ / "out"));
}

TEST_F(LifecycleTest, ExtraEnvironmentReachesTheCommandAfterFerrysOwn) {
  work_.extra_env = {{"MLFLOW_RUN_ID", "r1"}, {"MLFLOW_TRACKING_URI", "http://t:1"}};
  processes_.exits_at = seconds(1);
  EXPECT_EQ(Run().exit_code, 0);
  EXPECT_EQ(work_.extra_env_calls, 1);
  ASSERT_GE(processes_.env.size(), 2u);
  EXPECT_EQ(processes_.env[processes_.env.size() - 2],
            (std::pair<std::string, std::string>{"MLFLOW_RUN_ID", "r1"}));
  EXPECT_EQ(processes_.env.back().first, "MLFLOW_TRACKING_URI");
  EXPECT_EQ(processes_.env.front().first, "FERRY_RUN_ID");
}

TEST_F(LifecycleTest, NoExtraEnvironmentIsAskedForWhenThePreflightFails) {
  work_.preflight.errors = {"bad"};
  EXPECT_EQ(Run().exit_code, 1);
  EXPECT_EQ(work_.extra_env_calls, 0);
}

TEST_F(LifecycleTest, StopSignalIsForwardedAtOnceWhileAPeriodicSyncIsInFlight) {
  plan_.options.interval = seconds(10);
  tasks_.durations = {kForever};  // a long upload: only ends when cancelled
  signals_.SendAt(milliseconds(15'250), SIGTERM);
  RunOutcome out = Run();
  ASSERT_EQ(processes_.sent.size(), 1u);
  EXPECT_EQ(processes_.sent[0].at, milliseconds(15'250));  // not at the sync's end, not at a poll
  EXPECT_EQ(processes_.sent[0].target, kPid);
  EXPECT_EQ(processes_.sent[0].sig, SIGTERM);
  EXPECT_FALSE(processes_.sent[0].whole_group);  // the main process only
  // The sync in flight was stopped; the final stage-out took everything.
  ASSERT_EQ(tasks_.records.size(), 2u);
  EXPECT_EQ(tasks_.records[0]->started, seconds(10));
  EXPECT_TRUE(tasks_.records[0]->cancelled);
  EXPECT_EQ(Kinds(work_), (std::vector<SyncKind>{SyncKind::kPeriodic, SyncKind::kFinal}));
  EXPECT_TRUE(work_.syncs[0].cancelled);
  EXPECT_FALSE(work_.syncs[1].cancelled);
  EXPECT_EQ(work_.syncs[1].child.how, "killed by signal 15");
  EXPECT_EQ(out.exit_code, 143);
}

TEST_F(LifecycleTest, GracePeriodThenSigkillAndLeftoversGetTheSameDeadline) {
  processes_.term_takes.reset();  // ignores SIGTERM
  processes_.leftovers = {.found = {77}, .killed = 1};
  signals_.SendAt(seconds(1), SIGTERM);
  signals_.SendAt(seconds(4), SIGINT);  // a second one while waiting: forwarded again, no more
  RunOutcome out = Run();
  ASSERT_EQ(processes_.sent.size(), 3u);
  EXPECT_EQ(processes_.sent[0].at, seconds(1));
  EXPECT_EQ(processes_.sent[0].sig, SIGTERM);
  EXPECT_FALSE(processes_.sent[0].whole_group);
  EXPECT_EQ(processes_.sent[1].at, seconds(4));
  EXPECT_EQ(processes_.sent[1].sig, SIGTERM);
  EXPECT_FALSE(processes_.sent[1].whole_group);
  EXPECT_EQ(processes_.sent[2].at, seconds(31));  // grace counted from the first signal
  EXPECT_EQ(processes_.sent[2].sig, SIGKILL);
  EXPECT_TRUE(processes_.sent[2].whole_group);         // workers and all
  EXPECT_TRUE(processes_.escaped_terminated.empty());  // stopped with the leftovers
  ASSERT_EQ(processes_.leftover_calls.size(), 1u);
  EXPECT_EQ(processes_.leftover_calls[0].at, seconds(31));
  EXPECT_EQ(processes_.leftover_calls[0].kill_at, seconds(31));
  EXPECT_EQ(work_.syncs.back().child.how, "killed by signal 9");
  EXPECT_EQ(out.exit_code, 137);
  // The wait before SIGKILL is one wake-up at the deadline plus the trigger file's polls.
  EXPECT_LE(signals_.waits(), 70);
}

TEST_F(LifecycleTest, MainProcessThatSavesAndExitsHasItsGroupStoppedAsLeftoversOnTheSameDeadline) {
  processes_.term_takes = seconds(4);  // catches SIGTERM, saves a checkpoint, exits 0
  processes_.on_term = {.code = 0};
  signals_.SendAt(seconds(2), SIGTERM);
  RunOutcome out = Run();
  ASSERT_EQ(processes_.sent.size(), 1u);  // neither the group nor the escaped got anything
  EXPECT_EQ(processes_.sent[0].target, kPid);
  EXPECT_FALSE(processes_.sent[0].whole_group);
  EXPECT_TRUE(processes_.escaped_terminated.empty());
  // What it started (DataLoader workers, a background job) is stopped once it has ended,
  // before the final stage-out, with the grace period of the first signal.
  ASSERT_EQ(processes_.leftover_calls.size(), 1u);
  EXPECT_EQ(processes_.leftover_calls[0].at, seconds(6));
  EXPECT_EQ(processes_.leftover_calls[0].kill_at, seconds(32));
  EXPECT_EQ(Kinds(work_), std::vector<SyncKind>{SyncKind::kFinal});
  EXPECT_EQ(work_.syncs[0].child.how, "exited 0");
  EXPECT_EQ(out.exit_code, 0);
}

TEST_F(LifecycleTest, SignalGroupSendsSigtermToTheWholeGroupAndTheEscapedAtOnce) {
  plan_.options.signal_group = true;
  processes_.term_takes.reset();  // ignores SIGTERM
  signals_.SendAt(seconds(1), SIGINT);
  RunOutcome out = Run();
  ASSERT_EQ(processes_.sent.size(), 2u);
  EXPECT_EQ(processes_.sent[0].at, seconds(1));
  EXPECT_EQ(processes_.sent[0].sig, SIGTERM);
  EXPECT_TRUE(processes_.sent[0].whole_group);
  EXPECT_EQ(processes_.sent[0].target, kPid);
  EXPECT_EQ(processes_.escaped_terminated, std::vector<milliseconds>{seconds(1)});
  EXPECT_EQ(processes_.sent[1].at, seconds(31));
  EXPECT_EQ(processes_.sent[1].sig, SIGKILL);
  EXPECT_TRUE(processes_.sent[1].whole_group);
  EXPECT_EQ(out.exit_code, 137);
}

TEST_F(LifecycleTest, PeriodicSyncsAreAnIntervalApartFromTheEndOfTheLastAndNeverSpin) {
  tasks_.durations = {seconds(2), seconds(2), seconds(2)};
  processes_.exits_at = seconds(1000);
  Run();
  EXPECT_EQ(Kinds(work_), (std::vector<SyncKind>{SyncKind::kPeriodic, SyncKind::kPeriodic,
                                                 SyncKind::kPeriodic, SyncKind::kFinal}));
  EXPECT_EQ(Starts(tasks_),
            (std::vector<milliseconds>{seconds(300), seconds(602), seconds(904), seconds(1000)}));
  EXPECT_TRUE(work_.syncs[0].child.running);
  // Two wake-ups a second for the trigger file, ten while a sync runs: nothing like a busy loop.
  EXPECT_LE(signals_.waits(), 1000 * 2 + 3 * 2 * 10 + 10);
}

TEST_F(LifecycleTest, Sigusr1AsksForASyncNowAndOneDuringASyncIsKeptForTheNext) {
  tasks_.durations = {seconds(5)};
  signals_.SendAt(seconds(10), SIGUSR1);
  signals_.SendAt(seconds(12), SIGUSR1);  // while the first runs
  processes_.exits_at = seconds(60);
  Run();
  EXPECT_EQ(Kinds(work_),
            (std::vector<SyncKind>{SyncKind::kOnDemand, SyncKind::kOnDemand, SyncKind::kFinal}));
  EXPECT_EQ(Starts(tasks_), (std::vector<milliseconds>{seconds(10), seconds(15), seconds(60)}));
}

TEST_F(LifecycleTest, TriggerFileAsksForASyncAndIsRemovedOnceItIsDone) {
  tasks_.durations = {seconds(1)};
  bool there_while_syncing = false;
  signals_.DoAt(milliseconds(2'800), [&] { Touch(trigger()); });
  signals_.DoAt(milliseconds(3'500), [&] { there_while_syncing = fs::exists(trigger()); });
  processes_.exits_at = seconds(10);
  Run();
  EXPECT_EQ(Kinds(work_), (std::vector<SyncKind>{SyncKind::kOnDemand, SyncKind::kFinal}));
  EXPECT_EQ(tasks_.records[0]->started, seconds(3));  // polled twice a second
  EXPECT_TRUE(there_while_syncing);
  EXPECT_FALSE(fs::exists(trigger()));
  EXPECT_FALSE(fs::exists(failed()));
}

TEST_F(LifecycleTest, TriggerRequestAfterAStopSignalIsServedWithinTheGracePeriod) {
  // The command saves on SIGTERM, asks for the upload and waits for the answer.
  processes_.term_takes.reset();  // it handles SIGTERM itself
  tasks_.durations = {seconds(1)};
  signals_.SendAt(seconds(2), SIGTERM);
  signals_.DoAt(seconds(4), [&] { Touch(trigger()); });
  bool answered_before_exit = false;
  signals_.DoAt(milliseconds(5'900), [&] { answered_before_exit = !fs::exists(trigger()); });
  processes_.exits_at = seconds(6);
  Run();
  EXPECT_EQ(Kinds(work_), (std::vector<SyncKind>{SyncKind::kOnDemand, SyncKind::kFinal}));
  EXPECT_FALSE(work_.syncs[0].cancelled);
  EXPECT_TRUE(answered_before_exit);
  EXPECT_FALSE(fs::exists(failed()));
}

TEST_F(LifecycleTest, TriggerRequestPendingWhenTheStopSignalComesIsServedAndNotCancelled) {
  processes_.term_takes.reset();  // it handles SIGTERM itself
  tasks_.durations = {seconds(3)};
  signals_.DoAt(milliseconds(2'600), [&] { Touch(trigger()); });  // picked up at 3 s
  signals_.SendAt(seconds(4), SIGTERM);                           // while it uploads
  processes_.exits_at = seconds(8);
  Run();
  ASSERT_EQ(Kinds(work_), (std::vector<SyncKind>{SyncKind::kOnDemand, SyncKind::kFinal}));
  EXPECT_FALSE(tasks_.records[0]->cancelled);
  EXPECT_EQ(tasks_.records[0]->ended, seconds(6));
  EXPECT_FALSE(fs::exists(trigger()));
  EXPECT_FALSE(fs::exists(failed()));
}

TEST_F(LifecycleTest, TriggerRequestWhoseSyncSkippedFilesIsAnsweredWithAFailedFile) {
  tasks_.durations = {seconds(1), seconds(1)};
  work_.on_demand_rounds = {{.skipped = 1,
                             .first_skipped = "'/o/ext.log' (changed while being "
                                              "copied)"}};
  bool failed_during_second = true;
  std::string answer;
  signals_.DoAt(seconds(2), [&] { Touch(trigger()); });
  signals_.DoAt(seconds(5), [&] {
    answer = std::string(std::istreambuf_iterator<char>(std::ifstream(failed()).rdbuf()), {});
    Touch(trigger());  // the next request clears the answer while it is served
  });
  signals_.DoAt(milliseconds(5'500), [&] { failed_during_second = fs::exists(failed()); });
  processes_.exits_at = seconds(10);
  Run();
  EXPECT_EQ(Kinds(work_),
            (std::vector<SyncKind>{SyncKind::kOnDemand, SyncKind::kOnDemand, SyncKind::kFinal}));
  EXPECT_EQ(answer,
            "1 file(s) changed, vanished or could not be read while being uploaded and were left "
            "out (listed as skipped in the manifest); first: '/o/ext.log' (changed while being "
            "copied)\n");
  EXPECT_FALSE(failed_during_second);
  EXPECT_FALSE(fs::exists(trigger()));
  EXPECT_FALSE(fs::exists(failed()));  // the second one succeeded
}

TEST_F(LifecycleTest, StaleTriggerFromAnEarlierRunIsNotARequest) {
  Touch(trigger());
  processes_.exits_at = seconds(2);
  Run();
  EXPECT_EQ(Kinds(work_), std::vector<SyncKind>{SyncKind::kFinal});
}

TEST_F(LifecycleTest, RequestPendingAtTheEndIsAnsweredByTheFinalStageOut) {
  processes_.exits_at = milliseconds(1'200);
  signals_.DoAt(milliseconds(1'100), [&] {
    Touch(failed());  // the answer to an earlier request
    Touch(trigger());
  });
  Run();
  EXPECT_EQ(Kinds(work_), std::vector<SyncKind>{SyncKind::kFinal});
  EXPECT_FALSE(fs::exists(trigger()));
  EXPECT_FALSE(fs::exists(failed()));  // the final stage-out succeeded: no stale failure
}

TEST_F(LifecycleTest, PeriodicSyncInFlightWhenTheCommandEndsIsCancelled) {
  plan_.options.interval = seconds(10);
  tasks_.durations = {kForever};
  processes_.exits_at = seconds(12);
  processes_.exit = {.code = 0};
  RunOutcome out = Run();
  EXPECT_TRUE(tasks_.records[0]->cancelled);
  EXPECT_EQ(Kinds(work_), (std::vector<SyncKind>{SyncKind::kPeriodic, SyncKind::kFinal}));
  EXPECT_EQ(out.exit_code, 0);
}

TEST_F(LifecycleTest, SecondStopSignalStopsTheFinalStageOut) {
  tasks_.durations = {kForever};  // the final stage-out
  signals_.SendAt(seconds(1), SIGTERM);
  signals_.SendAt(seconds(5), SIGINT);
  RunOutcome out = Run();
  EXPECT_EQ(out.exit_code, 128 + SIGINT);
  EXPECT_TRUE(out.error.ok());  // logged when it happened
  ASSERT_EQ(work_.syncs.size(), 1u);
  EXPECT_EQ(work_.syncs[0].kind, SyncKind::kFinal);
  EXPECT_TRUE(work_.syncs[0].cancelled);
  EXPECT_EQ(tasks_.records[0]->ended, seconds(5));
}

TEST_F(LifecycleTest, FirstStopSignalAfterTheCommandEndedLetsTheFinalStageOutFinish) {
  processes_.exits_at = seconds(2);
  tasks_.durations = {seconds(10)};
  signals_.SendAt(seconds(5), SIGTERM);
  RunOutcome out = Run();
  EXPECT_EQ(out.exit_code, 0);
  ASSERT_EQ(work_.syncs.size(), 1u);
  EXPECT_FALSE(work_.syncs[0].cancelled);
  EXPECT_EQ(tasks_.records[0]->ended, seconds(12));
  EXPECT_TRUE(processes_.sent.empty());  // nobody left to forward it to
}

TEST_F(LifecycleTest, StopSignalThatCameWithTheCommandsEndIsTheFirst) {
  processes_.exits_at = seconds(2);
  signals_.SendAt(seconds(2), SIGTERM);  // seen in the same wake-up as the command's end
  tasks_.durations = {seconds(10)};
  signals_.SendAt(seconds(5), SIGTERM);
  RunOutcome out = Run();
  EXPECT_EQ(out.exit_code, 143);
  EXPECT_TRUE(work_.syncs[0].cancelled);
  EXPECT_EQ(tasks_.records[0]->ended, seconds(5));
}

TEST_F(LifecycleTest, StopSignalWhileLeftoversAreStoppedIsTheSecondOne) {
  signals_.SendAt(seconds(1), SIGTERM);  // the command ends on it, its leftovers do not
  processes_.leftovers_need_the_grace_period = true;
  processes_.leftovers = {.found = {77}, .killed = 1};
  tasks_.durations = {seconds(10)};
  signals_.SendAt(seconds(10), SIGTERM);  // while they are being stopped
  RunOutcome out = Run();
  EXPECT_EQ(processes_.leftover_calls[0].kill_at, seconds(31));
  EXPECT_EQ(out.exit_code, 143);
  ASSERT_EQ(work_.syncs.size(), 1u);
  EXPECT_TRUE(work_.syncs[0].cancelled);
  EXPECT_EQ(tasks_.records[0]->ended, seconds(31));  // stopped as soon as it started
}

TEST_F(LifecycleTest, FinalStageOutThatFailsOrSkipsFilesFailsASuccessfulCommand) {
  processes_.exits_at = seconds(1);
  work_.final_round = {.status = Status(StatusCode::kUnavailable, "connection refused")};
  RunOutcome out = Run();
  EXPECT_EQ(out.exit_code, 1);
  EXPECT_EQ(out.error.message(), "the command succeeded but the final stage-out failed");
}

TEST(DecideExit, TheCommandsStatusUnlessItSucceededWithoutItsResults) {
  ChildState ok{.exit_code = 0}, failed{.exit_code = 3}, killed{.exit_code = 137},
      unknown{.exit_code = -1};
  SyncRound good, broken{.status = Status(StatusCode::kUnavailable, "refused")},
      skipped{.skipped = 2, .first_skipped = "'/o/a' (changed while being copied)"};
  EXPECT_EQ(DecideExit(ok, good).exit_code, 0);
  EXPECT_TRUE(DecideExit(ok, good).error.ok());
  EXPECT_EQ(DecideExit(ok, broken).exit_code, 1);
  EXPECT_EQ(DecideExit(ok, broken).error.message(),
            "the command succeeded but the final stage-out failed");
  RunOutcome s = DecideExit(ok, skipped);
  EXPECT_EQ(s.exit_code, 1);
  EXPECT_EQ(s.error.message(),
            "the command succeeded but 2 file(s) could not be uploaded consistently by the final "
            "stage-out (they changed, vanished or could not be read; the manifest lists them as "
            "skipped); first: '/o/a' (changed while being copied)");
  // A failed command's status wins; skipped files are then only warnings.
  EXPECT_EQ(DecideExit(failed, broken).exit_code, 3);
  EXPECT_TRUE(DecideExit(failed, broken).error.ok());
  EXPECT_EQ(DecideExit(killed, skipped).exit_code, 137);
  EXPECT_EQ(DecideExit(unknown, good).exit_code, 1);
}

TEST_F(LifecycleTest, FailedPreflightIsShownAndTheCommandNeverStarts) {
  work_.preflight.errors = {"input s3://b/missing/: nothing at 's3://b/missing/'"};
  bool shown_ok = true;
  RunOutcome out = Run([&](const PreflightReport& r, bool ok) {
    shown_ok = ok;
    EXPECT_EQ(r.errors.size(), 1u);
  });
  EXPECT_FALSE(shown_ok);
  EXPECT_EQ(out.exit_code, 1);
  EXPECT_EQ(out.error.message(), "preflight failed; the command was not started");
  EXPECT_FALSE(processes_.started);
  EXPECT_TRUE(work_.syncs.empty());
  EXPECT_FALSE(fs::exists(dir_ / "out"));  // nothing is created before the preflight passed
}

TEST_F(LifecycleTest, StrictMakesPreflightWarningsFatal) {
  work_.preflight.warnings = {"output destination /x is on tmpfs"};
  plan_.options.strict = true;
  RunOutcome out = Run();
  EXPECT_EQ(out.error.message(),
            "preflight failed (--strict: warnings are fatal); the command was not started");
  plan_.options.skip_preflight = true;
  processes_.exits_at = seconds(1);
  work_.preflights = 0;
  EXPECT_EQ(Run().exit_code, 0);
  EXPECT_EQ(work_.preflights, 0);
}

TEST_F(LifecycleTest, StopSignalDuringPreflightMeansTheCommandIsNotStarted) {
  signals_.SendAt(milliseconds(0), SIGTERM);  // pending when the preflight ends
  plan_.options.inputs = {{"s3://b/data/", (dir_ / "in").string()}};
  RunOutcome out = Run();
  EXPECT_EQ(out.exit_code, 143);
  EXPECT_TRUE(out.error.ok());
  EXPECT_TRUE(work_.staged_in.empty());
  EXPECT_FALSE(processes_.started);
}

TEST_F(LifecycleTest, StopSignalDuringStageInCancelsItAndTheCommandNeverStarts) {
  plan_.options.inputs = {{"s3://b/data/", (dir_ / "in").string()},
                          {"s3://b/more/", (dir_ / "in2").string()}};
  tasks_.durations = {kForever};
  signals_.SendAt(seconds(3), SIGINT);
  RunOutcome out = Run();
  EXPECT_EQ(out.exit_code, 130);
  EXPECT_TRUE(tasks_.records[0]->cancelled);
  EXPECT_EQ(tasks_.records[0]->ended, seconds(3));
  EXPECT_EQ(work_.staged_in, std::vector<std::string>{"s3://b/data/"});
  EXPECT_FALSE(processes_.started);
  EXPECT_TRUE(work_.syncs.empty());
}

TEST_F(LifecycleTest, StopSignalAtTheEndOfTheStageInStillKeepsTheCommandFromStarting) {
  plan_.options.inputs = {{"s3://b/data/", (dir_ / "in").string()}};
  tasks_.durations = {seconds(2)};
  // Pending only once the stage-in's wait has seen it end.
  work_.during_stage_in = [&] { signals_.SendAt(clock_.Elapsed(), SIGTERM); };
  RunOutcome out = Run();
  EXPECT_EQ(out.exit_code, 143);
  EXPECT_FALSE(processes_.started);
}

TEST_F(LifecycleTest, FailedStageInEndsTheRunBeforeTheCommand) {
  plan_.options.inputs = {{"s3://b/data/", (dir_ / "in").string()}};
  work_.stage_in = NotFound("stage-in 's3://b/data/' to 'in' failed: no such bucket");
  RunOutcome out = Run();
  EXPECT_EQ(out.exit_code, 1);
  EXPECT_EQ(out.error.message(), "stage-in 's3://b/data/' to 'in' failed: no such bucket");
  EXPECT_FALSE(processes_.started);
}

TEST_F(LifecycleTest, UntrackedDescendantsAreNeitherSignalledNorStopped) {
  processes_.tracking =
      Status(StatusCode::kFailedPrecondition, "/proc is not this process's pid namespace");
  signals_.SendAt(seconds(1), SIGTERM);
  Run();
  // Nothing would stop what the main process leaves behind: the whole group gets SIGTERM.
  ASSERT_EQ(processes_.sent.size(), 1u);
  EXPECT_TRUE(processes_.sent[0].whole_group);
  EXPECT_TRUE(processes_.escaped_terminated.empty());
  EXPECT_TRUE(processes_.leftover_calls.empty());
}

TEST_F(LifecycleTest, LeftoversAreStoppedBeforeTheFinalStageOutWithGraceFromNow) {
  processes_.exits_at = seconds(7);
  Run();
  ASSERT_EQ(processes_.leftover_calls.size(), 1u);
  EXPECT_EQ(processes_.leftover_calls[0].at, seconds(7));
  EXPECT_EQ(processes_.leftover_calls[0].kill_at, seconds(37));
  EXPECT_EQ(tasks_.records.back()->started, seconds(7));
}

TEST_F(LifecycleTest, CommandGetsFerrysVariables) {
  processes_.exits_at = seconds(1);
  Run();
  EXPECT_EQ(processes_.env, CommandEnvironment(ran_plan_));
}

TEST_F(LifecycleTest, TheAttemptIsCountedBeforeThePreflightAndExpandsTheDestinations) {
  plan_.outputs[0].tmpl = "s3://b/runs/{job}/{attempt}/";
  plan_.outputs[0].url = "";
  work_.attempt = 4;
  processes_.exits_at = seconds(1);
  Run();
  EXPECT_EQ(work_.attempt_counts, 1);
  EXPECT_EQ(ran_plan_.id.attempt, "4");
  EXPECT_EQ(ran_plan_.outputs[0].url, "s3://b/runs/job-1/4/");
  ASSERT_FALSE(work_.sync_plans.empty());
  EXPECT_EQ(work_.sync_plans.back().outputs[0].url, "s3://b/runs/job-1/4/");
  auto& env = processes_.env;
  EXPECT_NE(
      std::find(env.begin(), env.end(), std::pair<std::string, std::string>{"FERRY_ATTEMPT", "4"}),
      env.end());
}

TEST_F(LifecycleTest, AnAttemptGivenByTheSchedulerIsNotCounted) {
  plan_.id.attempt = "2";
  processes_.exits_at = seconds(1);
  Run();
  EXPECT_EQ(work_.attempt_counts, 0);
  EXPECT_EQ(ran_plan_.id.attempt, "2");
}

TEST_F(LifecycleTest, AttemptsThatCannotBeCountedAreAPreflightError) {
  plan_.outputs[0].tmpl = "s3://b/runs/{attempt}/";
  work_.attempt = Status(StatusCode::kPermissionDenied, "counting attempts at 's3://b/x': denied");
  PreflightReport shown;
  RunOutcome out = Run([&](const PreflightReport& r, bool) { shown = r; });
  EXPECT_EQ(out.exit_code, 1);
  EXPECT_EQ(work_.preflights, 1);
  ASSERT_EQ(shown.errors.size(), 1u);
  EXPECT_EQ(shown.errors[0], "counting attempts at 's3://b/x': denied");
  EXPECT_FALSE(processes_.started);
  // Without a preflight the error ends the run itself.
  plan_.options.skip_preflight = true;
  out = Run();
  EXPECT_EQ(out.exit_code, 1);
  EXPECT_EQ(out.error.message(), "counting attempts at 's3://b/x': denied");
}

TEST_F(LifecycleTest, AnAttemptThatNamesNothingIsZeroWhenItCannotBeCounted) {
  work_.attempt = Status(StatusCode::kPermissionDenied, "counting attempts at 's3://b/x': denied");
  processes_.exits_at = seconds(1);
  PreflightReport shown;
  RunOutcome out = Run([&](const PreflightReport& r, bool) { shown = r; });
  EXPECT_EQ(out.exit_code, 0);
  EXPECT_TRUE(processes_.started);
  EXPECT_EQ(ran_plan_.id.attempt, "0");
  ASSERT_EQ(shown.warnings.size(), 1u);
  EXPECT_EQ(shown.warnings[0],
            "counting attempts at 's3://b/x': denied (the attempt is taken as 0)");
}

TEST_F(LifecycleTest, ResumedSetIsToldToTheCommandAndRecordedByEverySync) {
  plan_.options.resume_dir = (dir_ / "out").string();
  work_.resume = std::optional<ResumeSource>(
      ResumeSource{.manifest_url = "s3://b/out/_ferry/manifest.json", .attempt = "1"});
  processes_.exits_at = seconds(1);
  RunOutcome out = Run();
  EXPECT_EQ(out.exit_code, 0);
  EXPECT_EQ(work_.resumes, 1);
  ASSERT_TRUE(ran_plan_.resumed_from);
  ASSERT_FALSE(work_.sync_plans.empty());
  ASSERT_TRUE(work_.sync_plans.back().resumed_from);
  EXPECT_EQ(work_.sync_plans.back().resumed_from->attempt, "1");
  auto& env = processes_.env;
  for (const auto& want : std::vector<std::pair<std::string, std::string>>{
           {"FERRY_RESUMED", "1"},
           {"FERRY_RESUME_ATTEMPT", "1"},
           {"FERRY_RESUME_DIR", (dir_ / "out").string()}}) {
    EXPECT_NE(std::find(env.begin(), env.end(), want), env.end()) << want.first;
  }
}

TEST_F(LifecycleTest, NothingToResumeStartsFresh) {
  plan_.options.resume_dir = (dir_ / "out").string();
  processes_.exits_at = seconds(1);
  EXPECT_EQ(Run().exit_code, 0);
  EXPECT_TRUE(processes_.started);
  EXPECT_FALSE(ran_plan_.resumed_from);
  auto& env = processes_.env;
  EXPECT_NE(
      std::find(env.begin(), env.end(), std::pair<std::string, std::string>{"FERRY_RESUMED", "0"}),
      env.end());
}

TEST_F(LifecycleTest, AResumeThatFailsKeepsTheCommandFromStarting) {
  plan_.options.resume_dir = (dir_ / "out").string();
  work_.resume =
      Status(StatusCode::kDataLoss, "resuming 's3://b/x/a.pt': CRC32C 1, the manifest says 2");
  RunOutcome out = Run();
  EXPECT_EQ(out.exit_code, 1);
  EXPECT_EQ(out.error.message(), "--resume '" + (dir_ / "out").string() +
                                     "': resuming 's3://b/x/a.pt': CRC32C 1, the manifest says 2");
  EXPECT_FALSE(processes_.started);
  EXPECT_TRUE(work_.syncs.empty());
}

TEST_F(LifecycleTest, StopSignalWhileResumingEndsTheRunUnstarted) {
  plan_.options.resume_dir = (dir_ / "out").string();
  tasks_.durations = {kForever};
  signals_.SendAt(seconds(2), SIGTERM);
  RunOutcome out = Run();
  EXPECT_EQ(out.exit_code, 143);
  EXPECT_TRUE(tasks_.records[0]->cancelled);
  EXPECT_FALSE(processes_.started);
}

}  // namespace
}  // namespace ferry::job
