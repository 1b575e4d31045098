#pragma once
// Fakes of run_system.h (and of RunWork) for unit tests of the `ferry run` lifecycle. Time is a
// FakeClock that moves only when the code under test waits (FakeSignalSource::Wait) or waits
// for a task; signals, the command's end and other events are scripted on it, so a test of an
// hour-long run takes microseconds, sleeps nowhere and always sees the same order of events.
// Test-only (gtest): not part of any library.

#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "job/lifecycle.h"
#include "job/run_system.h"

namespace ferry::job::testing {

using std::chrono::milliseconds;

class FakeClock final : public Clock {
 public:
  SteadyTime Now() const override { return now_; }
  // `t` after the fake's start, and back.
  SteadyTime At(milliseconds t) const { return kStart + t; }
  milliseconds Since(SteadyTime t) const {
    return std::chrono::duration_cast<milliseconds>(t - kStart);
  }
  milliseconds Elapsed() const { return Since(now_); }
  void AdvanceTo(SteadyTime t) { now_ = std::max(now_, t); }

 private:
  static constexpr SteadyTime kStart = SteadyTime(std::chrono::hours(1));
  SteadyTime now_ = kStart;
};

// Signals to ferry and other events (a file appears) at scripted times. Wait() moves the clock
// to the next event or to its timeout, whichever is first; actions run as the clock passes them,
// signals end the wait.
class FakeSignalSource final : public SignalSource {
 public:
  explicit FakeSignalSource(FakeClock& clock) : clock_(clock) {}

  void SendAt(milliseconds t, int sig) { SendAt(clock_.At(t), sig); }
  void SendAt(SteadyTime when, int sig) { events_.push_back({when, sig, {}}); }
  void DoAt(milliseconds t, std::function<void()> action) {
    events_.push_back({clock_.At(t), 0, std::move(action)});
  }

  int Wait(milliseconds timeout) override {
    ++waits_;
    const SteadyTime until = clock_.Now() + timeout;
    while (true) {
      FireDue();
      if (!pending_.empty()) {
        int sig = pending_.front();
        pending_.pop_front();
        return sig;
      }
      auto next = std::min_element(events_.begin(), events_.end(),
                                   [](const Event& a, const Event& b) { return a.when < b.when; });
      if (next == events_.end() || next->when > until) {
        clock_.AdvanceTo(until);
        return 0;
      }
      clock_.AdvanceTo(next->when);
    }
  }

  int TakePendingStop() override {
    FireDue();
    auto stop = std::find_if(pending_.begin(), pending_.end(), IsStopSignal);
    if (stop == pending_.end()) return 0;
    int sig = *stop;
    pending_.erase(stop);
    return sig;
  }

  int waits() const { return waits_; }

 private:
  struct Event {
    SteadyTime when;
    int sig = 0;
    std::function<void()> action;
  };

  void FireDue() {
    // In time order; an action may script more events.
    while (true) {
      auto due = std::min_element(events_.begin(), events_.end(),
                                  [](const Event& a, const Event& b) { return a.when < b.when; });
      if (due == events_.end() || due->when > clock_.Now()) return;
      Event e = std::move(*due);
      events_.erase(due);
      if (e.action) e.action();
      // Like the kernel's: a signal already pending is not queued twice.
      if (e.sig != 0 && std::find(pending_.begin(), pending_.end(), e.sig) == pending_.end()) {
        pending_.push_back(e.sig);
      }
    }
  }

  FakeClock& clock_;
  std::vector<Event> events_;
  std::deque<int> pending_;
  int waits_ = 0;
};

// The command and what it leaves behind, as the test scripts them; records what ferry did.
class FakeProcessLauncher final : public ProcessLauncher {
 public:
  static constexpr pid_t kPid = 4242;

  struct Sent {
    milliseconds at;
    pid_t target;  // the process, or with whole_group the process group
    int sig;
    bool whole_group;  // SignalGroup rather than Signal
  };

  FakeProcessLauncher(FakeClock& clock, FakeSignalSource& signals)
      : clock_(clock), signals_(signals) {}

  // Script. The command ends by itself at `exits_at` (never when unset) as `exit`; SIGTERM ends
  // it `term_takes` later as `on_term` (it ignores SIGTERM when unset); SIGKILL at once.
  std::optional<milliseconds> exits_at;
  ProcessExit exit;
  std::optional<milliseconds> term_takes = milliseconds(200);
  ProcessExit on_term{.signal = SIGTERM};
  Status tracking;                               // TrackDescendants()
  LeftoverReport leftovers;                      // StopLeftovers()
  bool leftovers_need_the_grace_period = false;  // StopLeftovers() returns at kill_at

  // Record.
  bool started = false;
  std::vector<std::string> argv;
  std::vector<std::pair<std::string, std::string>> env;
  std::vector<Sent> sent;
  std::vector<milliseconds> escaped_terminated;
  struct LeftoverCall {
    milliseconds at, kill_at;
  };
  std::vector<LeftoverCall> leftover_calls;

  Status TrackDescendants() override { return tracking; }

  Result<pid_t> Start(const std::vector<std::string>& a,
                      const std::vector<std::pair<std::string, std::string>>& e) override {
    started = true;
    argv = a;
    env = e;
    if (exits_at) End(clock_.At(*exits_at), exit);
    return kPid;
  }

  // The main process reacts alike to a signal of its own and to one to its group.
  void Signal(pid_t pid, int sig) override { Receive(pid, sig, false); }
  void SignalGroup(pid_t group, int sig) override { Receive(group, sig, true); }

  void TerminateEscaped(pid_t) override { escaped_terminated.push_back(clock_.Elapsed()); }

  std::optional<ProcessExit> ReapExited(pid_t command) override {
    EXPECT_EQ(command, kPid);
    if (!end_ || reaped_ || clock_.Now() < end_->first) return std::nullopt;
    reaped_ = true;
    return end_->second;
  }

  LeftoverReport StopLeftovers(SteadyTime kill_at) override {
    leftover_calls.push_back({clock_.Elapsed(), clock_.Since(kill_at)});
    if (leftovers_need_the_grace_period) clock_.AdvanceTo(kill_at);
    return leftovers;
  }

 private:
  void Receive(pid_t target, int sig, bool whole_group) {
    sent.push_back({clock_.Elapsed(), target, sig, whole_group});
    if (sig == SIGKILL) End(clock_.Now(), {.signal = SIGKILL});
    if (sig == SIGTERM && term_takes) End(clock_.Now() + *term_takes, on_term);
  }

  void End(SteadyTime when, ProcessExit how) {
    if (end_ && end_->first <= when) return;
    end_ = {when, how};
    signals_.SendAt(when, SIGCHLD);
  }

  FakeClock& clock_;
  FakeSignalSource& signals_;
  std::optional<std::pair<SteadyTime, ProcessExit>> end_;
  bool reaped_ = false;
};

// Background tasks that take a scripted time on the fake clock. The work itself runs on the
// caller's thread when the task is seen to end (Done, Wait), with its cancel flag as it is then.
class FakeTaskRunner final : public TaskRunner {
 public:
  static constexpr milliseconds kUntilCancelled = milliseconds::max();

  struct Record {
    milliseconds started;
    std::optional<milliseconds> ended;
    bool cancelled = false;
  };

  explicit FakeTaskRunner(FakeClock& clock) : clock_(clock) {}

  // How long the tasks take, in the order they start; later ones take no time.
  std::vector<milliseconds> durations;
  // Every task started, in order.
  std::vector<std::shared_ptr<Record>> records;

  std::unique_ptr<BackgroundTask> Start(
      std::function<void(const std::atomic<bool>& cancel)> work) override {
    milliseconds takes =
        records.size() < durations.size() ? durations[records.size()] : milliseconds(0);
    auto record = std::make_shared<Record>(Record{.started = clock_.Elapsed()});
    records.push_back(record);
    return std::make_unique<Task>(clock_, takes, std::move(work), std::move(record));
  }

 private:
  class Task final : public BackgroundTask {
   public:
    Task(FakeClock& clock, milliseconds takes, std::function<void(const std::atomic<bool>&)> work,
         std::shared_ptr<Record> record)
        : clock_(clock),
          ends_(takes == kUntilCancelled ? std::nullopt : std::optional(clock.Now() + takes)),
          work_(std::move(work)),
          record_(std::move(record)) {}
    ~Task() override { EXPECT_TRUE(ran_) << "a task was dropped before it ended"; }

    bool Done() override {
      if (!ran_ && (cancel_ || (ends_ && clock_.Now() >= *ends_))) Run();
      return ran_;
    }
    void Cancel() override {
      cancel_ = true;
      record_->cancelled = true;
    }
    void Wait() override {
      if (ran_) return;
      if (!cancel_) {
        EXPECT_TRUE(ends_) << "Wait() for a task that ends only when cancelled";
        if (ends_) clock_.AdvanceTo(*ends_);
      }
      Run();
    }

   private:
    void Run() {
      work_(cancel_);
      ran_ = true;
      record_->ended = clock_.Elapsed();
    }

    FakeClock& clock_;
    std::optional<SteadyTime> ends_;
    std::function<void(const std::atomic<bool>&)> work_;
    std::shared_ptr<Record> record_;
    std::atomic<bool> cancel_{false};
    bool ran_ = false;
  };

  FakeClock& clock_;
};

// Preflight, stage-in and syncs as the test scripts them; records each call.
class FakeRunWork final : public RunWork {
 public:
  struct SyncCall {
    SyncKind kind;
    ChildState child;
    bool cancelled;
  };

  PreflightReport preflight;
  Status stage_in;                        // every stage-in's result unless cancelled
  std::function<void()> during_stage_in;  // runs inside each stage-in
  SyncRound periodic_round;  // what periodic and on-demand syncs return, one after the other,
  std::vector<SyncRound> on_demand_rounds;  // ... on-demand ones from here while it lasts
  SyncRound final_round;

  Result<int> attempt = 0;  // what CountAttempt returns
  Result<std::optional<ResumeSource>> resume =
      std::nullopt;                     // what Resume returns unless cancelled
  std::function<void()> during_resume;  // runs inside Resume

  int preflights = 0, attempt_counts = 0, resumes = 0;
  std::vector<std::string> staged_in;
  std::vector<SyncCall> syncs;
  std::vector<RunPlan> sync_plans;  // the plan each sync was given
  // What ExtraEnvironment returns (RunHooks::BeforeStart's variables), and how often it was asked.
  std::vector<std::pair<std::string, std::string>> extra_env;
  int extra_env_calls = 0;

  std::vector<std::pair<std::string, std::string>> ExtraEnvironment(const RunPlan&) override {
    ++extra_env_calls;
    return extra_env;
  }

  Result<int> CountAttempt(const RunPlan&) override {
    ++attempt_counts;
    return attempt;
  }

  PreflightReport Preflight(const RunPlan&) override {
    ++preflights;
    return preflight;
  }

  Result<std::optional<ResumeSource>> Resume(const RunPlan&,
                                             const std::atomic<bool>& cancel) override {
    ++resumes;
    if (during_resume) during_resume();
    if (cancel) return Status(StatusCode::kCancelled, "copy cancelled");
    return resume;
  }

  Status StageIn(const std::string& src_url, const std::string&,
                 const std::atomic<bool>& cancel) override {
    staged_in.push_back(src_url);
    if (during_stage_in) during_stage_in();
    if (cancel) return Status(StatusCode::kCancelled, "copy cancelled");
    return stage_in;
  }

  SyncRound Sync(const RunPlan& plan, SyncKind kind, const ChildState& child,
                 const std::atomic<bool>& cancel) override {
    syncs.push_back({kind, child, cancel.load()});
    sync_plans.push_back(plan);
    if (cancel) return {.status = Status(StatusCode::kCancelled, "copy cancelled")};
    if (kind == SyncKind::kFinal) return final_round;
    if (kind == SyncKind::kOnDemand && !on_demand_rounds.empty()) {
      SyncRound r = on_demand_rounds.front();
      on_demand_rounds.erase(on_demand_rounds.begin());
      return r;
    }
    return periodic_round;
  }
};

}  // namespace ferry::job::testing
