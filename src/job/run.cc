#include "job/run.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <functional>
#include <future>
#include <random>
#include <thread>

#include "base/log.h"
#include "base/redact.h"
#include "base/strings.h"
#include "job/preflight.h"
#include "job/process_tree.h"
#include "job/sync.h"
#include "transfer/copy_engine.h"

namespace ferry::job {

namespace {

using Clock = std::chrono::steady_clock;

std::string Today() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

// One sync of every output.
struct SyncRound {
  Status status;              // the first output whose sync failed (all outputs are tried)
  size_t skipped = 0;         // files left out by the syncs that succeeded
  std::string first_skipped;  // "'DIR/PATH' (REASON)"

  // The round as one status: failed, or OK but with files left out (named), or OK.
  Status AsStatus() const {
    if (!status.ok() || skipped == 0) return status;
    return Status(StatusCode::kFailedPrecondition,
                  std::to_string(skipped) +
                      " file(s) changed, vanished or could not be read while being uploaded and "
                      "were left out (listed as skipped in the manifest); first: " +
                      first_skipped);
  }
};

SyncRound SyncAll(storage::StoreRegistry& registry, const std::vector<Output>& outputs,
                  SyncKind kind, const RunIdentity& id, const RunOptions& options,
                  const ChildState& child, const std::atomic<bool>* cancel = nullptr) {
  SyncRound round;
  for (const auto& o : outputs) {
    auto skipped = SyncOutput(registry, o, kind, id, options, child, cancel);
    if (!skipped.ok() && skipped.status().code() == StatusCode::kCancelled) {
      Log(LogLevel::kInfo, "sync of '{}' stopped: {}", o.dir,
          kind == SyncKind::kFinal ? "a second stop signal" : "the command is ending");
      if (round.status.ok()) round.status = skipped.status();
      break;
    }
    if (!skipped.ok()) {
      Status s = skipped.status().WithContext("sync of '" + o.dir + "' to '" + o.url + "'");
      Log(LogLevel::kError, "{}", s.message());
      if (round.status.ok()) round.status = s;
      continue;
    }
    if (!skipped->empty() && round.skipped == 0) {
      round.first_skipped =
          "'" + o.dir + "/" + skipped->front().path + "' (" + skipped->front().reason + ")";
    }
    round.skipped += skipped->size();
    Log(LogLevel::kInfo, "synced '{}' to '{}'{}", o.dir, o.url,
        skipped->empty() ? "" : fmt::format(", {} file(s) left out", skipped->size()));
  }
  return round;
}

// Runs `work` on a thread while this one waits for SIGTERM/SIGINT (held in `signals`, see
// RunJob): the first one sets `cancel`, so the work stops within about a second. Returns the
// signal received (0 = none).
int RunStoppable(const sigset_t& signals, std::atomic<bool>& cancel,
                 const std::function<void()>& work) {
  std::atomic<bool> done{false};
  std::thread worker([&] {
    work();
    done = true;
  });
  int received = 0;
  sigset_t stop;
  sigemptyset(&stop);
  for (int s : {SIGTERM, SIGINT}) {
    if (sigismember(&signals, s)) sigaddset(&stop, s);
  }
  while (!done) {
    timespec ts{0, 100 * 1000000};
    int sig = ::sigtimedwait(&stop, nullptr, &ts);
    if ((sig == SIGTERM || sig == SIGINT) && received == 0) {
      received = sig;
      cancel = true;
    }
  }
  worker.join();
  return received;
}

// SIGTERM to the processes below ferry that left the command's process group (setsid,
// daemons): the group itself gets its SIGTERM from the caller.
void TerminateEscaped(pid_t group, bool tracked) {
  if (!tracked) return;
  for (const auto& e : Descendants(::getpid(), ReadProcTable())) {
    if (e.pgid != group) ::kill(e.pid, SIGTERM);
  }
}

// After the command ended: stops what it left running (see process_tree.h) and says so.
void StopWhatTheCommandLeft(Clock::time_point kill_at, bool tracked) {
  if (!tracked) return;
  LeftoverReport left = StopLeftovers(kill_at);
  if (left.found.empty()) return;
  std::string pids;
  for (size_t i = 0; i < left.found.size() && i < 10; ++i) {
    pids += (i ? " " : "") + std::to_string(left.found[i]);
  }
  if (left.found.size() > 10) pids += " ...";
  Log(LogLevel::kWarn,
      "stopped {} process(es) the command left running (escaped or background; pid {}): {} "
      "ended on SIGTERM, {} needed SIGKILL{}",
      left.found.size(), pids, left.found.size() - static_cast<size_t>(left.killed), left.killed,
      left.started_meanwhile == 0
          ? ""
          : fmt::format(" ({} more that they started meanwhile were stopped too)",
                        left.started_meanwhile));
  if (!left.alive.empty()) {
    Log(LogLevel::kError,
        "{} process(es) still alive after SIGKILL (uninterruptible?); the final "
        "stage-out runs anyway",
        left.alive.size());
  }
}

// Answers a trigger-file request: removed when its sync succeeded; renamed to <file>.failed
// holding the error when it did not (so it neither reads as done nor fires again).
void AnswerTrigger(const std::string& trigger, const Status& synced) {
  if (synced.ok()) {
    ::unlink(trigger.c_str());
    return;
  }
  std::string failed = trigger + ".failed";
  if (FILE* f = std::fopen(failed.c_str(), "w")) {
    std::fprintf(f, "%s\n", Redact(synced.message()).c_str());
    std::fclose(f);
  }
  ::unlink(trigger.c_str());
}

// A SIGTERM/SIGINT already pending (held since RunJob started), taken; 0 = none.
int PendingStop(const sigset_t& held) {
  sigset_t pending;
  sigpending(&pending);
  for (int s : {SIGTERM, SIGINT}) {
    if (sigismember(&held, s) && sigismember(&pending, s)) {
      sigset_t one;
      sigemptyset(&one);
      sigaddset(&one, s);
      timespec zero{0, 0};
      if (::sigtimedwait(&one, nullptr, &zero) == s) return s;
    }
  }
  return 0;
}

pid_t StartChild(const RunOptions& options, const std::vector<Output>& outputs,
                 const RunIdentity& id, const sigset_t& old_mask) {
  pid_t pid = ::fork();
  if (pid != 0) return pid;
  ::setpgid(0, 0);  // its own process group: signals reach the whole training process tree
  ::sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  ::setenv("FERRY_RUN_ID", id.job.c_str(), 1);
  for (size_t i = 0; i < outputs.size(); ++i) {
    ::setenv(("FERRY_OUTPUT_" + std::to_string(i)).c_str(), outputs[i].dir.c_str(), 1);
    ::setenv(("FERRY_OUTPUT_URL_" + std::to_string(i)).c_str(), outputs[i].url.c_str(), 1);
  }
  if (!outputs.empty()) ::setenv("FERRY_OUTPUT", outputs[0].dir.c_str(), 1);
  ::setenv("FERRY_SYNC_TRIGGER", options.trigger_file.c_str(), 1);
  for (size_t i = 0; i < options.inputs.size(); ++i) {
    ::setenv(("FERRY_INPUT_" + std::to_string(i)).c_str(), options.inputs[i].second.c_str(), 1);
  }
  std::vector<char*> argv;
  for (const auto& a : options.command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  ::execvp(argv[0], argv.data());
  std::fprintf(stderr, "ferry: error: cannot run '%s': %s\n", argv[0], std::strerror(errno));
  ::_exit(127);
}

}  // namespace

RunIdentity DetectIdentity(const Environment& env) {
  RunIdentity id;
  for (const char* k : {"FERRY_RUN_ID", "SLURM_JOB_ID", "TORCHELASTIC_RUN_ID", "JOB_ID"}) {
    if (auto v = env.Get(k)) {
      id.job = *v;
      break;
    }
  }
  if (id.job.empty() && env.Get("KUBERNETES_SERVICE_HOST")) id.job = env.GetOr("HOSTNAME", "");
  if (id.job.empty()) {
    std::random_device rd;
    char buf[64];
    std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
    id.job =
        std::string(buf) + "-" +
        HexEncode(std::array<uint8_t, 3>{static_cast<uint8_t>(rd()), static_cast<uint8_t>(rd()),
                                         static_cast<uint8_t>(rd())});
  }
  id.attempt =
      env.Get("SLURM_RESTART_COUNT").value_or(env.GetOr("TORCHELASTIC_RESTART_COUNT", "0"));
  id.rank = env.Get("RANK").value_or(env.GetOr("SLURM_PROCID", "0"));
  char host[256] = {0};
  ::gethostname(host, sizeof host - 1);
  id.host = host;
  id.date = Today();
  return id;
}

Result<std::string> ExpandTemplate(const std::string& tmpl, const RunIdentity& id) {
  std::string out;
  for (size_t i = 0; i < tmpl.size(); ++i) {
    if (tmpl[i] != '{') {
      out.push_back(tmpl[i]);
      continue;
    }
    size_t close = tmpl.find('}', i);
    if (close == std::string::npos) return InvalidArgument("unclosed '{' in '" + tmpl + "'");
    std::string name = tmpl.substr(i + 1, close - i - 1);
    if (name == "job")
      out += id.job;
    else if (name == "attempt")
      out += id.attempt;
    else if (name == "rank")
      out += id.rank;
    else if (name == "host")
      out += id.host;
    else if (name == "date")
      out += id.date;
    else
      return InvalidArgument("unknown template field '{" + name + "}' in '" + tmpl +
                             "' (known: {job} {attempt} {rank} {host} {date})");
    i = close;
  }
  return out;
}

int RunJob(const RunOptions& run_options, storage::StoreRegistry& registry,
           const Environment& env) {
  // Signals are held from the start: a SIGTERM during preflight or stage-in stays pending and is
  // forwarded to the command as soon as it exists (then the final sync runs as usual).
  sigset_t mask, old_mask;
  sigemptyset(&mask);
  for (int s : {SIGTERM, SIGINT, SIGUSR1, SIGCHLD}) sigaddset(&mask, s);
  ::sigprocmask(SIG_BLOCK, &mask, &old_mask);
  RunIdentity id = DetectIdentity(env);
  RunOptions options = run_options;
  if (options.trigger_file.empty()) {
    options.trigger_file =
        env.GetOr("TMPDIR", "/tmp") + "/ferry-sync-" + std::to_string(::getpid());
  }
  options.trigger_file = std::filesystem::absolute(options.trigger_file).string();
  ::unlink(options.trigger_file.c_str());  // a stale request from an earlier run is not one
  std::vector<Output> outputs;
  for (const auto& [dir, tmpl] : options.outputs) {
    auto url = ExpandTemplate(tmpl, id);
    if (!url.ok()) {
      Log(LogLevel::kError, "{}", url.status().message());
      return 2;
    }
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    outputs.push_back({std::filesystem::absolute(dir).string(), *url, tmpl});
  }
  // Preflight: every problem is reported in one block before any GPU time is spent.
  if (!options.skip_preflight) {
    std::vector<std::pair<std::string, std::string>> outs;
    for (const auto& o : outputs) outs.emplace_back(o.dir, o.url);
    PreflightReport pre = RunPreflight(registry, options.inputs, outs);
    std::string block = "ferry: preflight:\n";
    for (const auto& l : pre.lines) block += "  ok:      " + l + "\n";
    for (const auto& w : pre.warnings) block += "  warning: " + w + "\n";
    for (const auto& e : pre.errors) block += "  error:   " + e + "\n";
    bool ok = pre.ok(options.strict);
    if (!ok || !pre.warnings.empty() || LogEnabled(LogLevel::kInfo)) {
      std::fputs(Redact(block).c_str(), stderr);
    }
    if (!ok) {
      Log(LogLevel::kError, "preflight failed{}; the command was not started",
          pre.errors.empty() ? " (--strict: warnings are fatal)" : "");
      return 1;
    }
  }
  // A stop asked for during preflight: the command is not started (nothing to stage out).
  if (int sig = PendingStop(mask)) {
    Log(LogLevel::kWarn, "received signal {} before the command started; not starting it", sig);
    return 128 + sig;
  }
  // Stage-in before the command starts; a failure here means the command never runs. A stop
  // signal ends it within about a second, and the command is not started.
  for (const auto& [src_url, dir] : options.inputs) {
    auto src = registry.Open(src_url);
    auto dst = registry.Open(std::filesystem::absolute(dir).string() + "/");
    if (!src.ok() || !dst.ok()) {
      Log(LogLevel::kError, "stage-in '{}': {}", src_url,
          (!src.ok() ? src.status() : dst.status()).message());
      return 1;
    }
    transfer::ProgressCounters counters;
    std::atomic<bool> cancel{false};
    transfer::CopyResult r;
    int sig = RunStoppable(mask, cancel, [&] {
      r = transfer::RunCopy(*src, *dst, {.recursive = true, .cancel = &cancel}, counters);
    });
    if (sig != 0) {
      Log(LogLevel::kWarn,
          "received signal {} during stage-in of '{}'; stopped it (a rerun resumes it) and did "
          "not start the command",
          sig, src_url);
      return 128 + sig;
    }
    if (!r.status.ok()) {
      Log(LogLevel::kError, "stage-in '{}' to '{}' failed: {}", src_url, dir, r.status.message());
      return 1;
    }
    Log(LogLevel::kInfo, "staged in '{}': {} copied, {} unchanged", src_url, r.report.files_copied,
        r.report.files_skipped);
  }

  // Before the fork: whatever the command starts stays below ferry, even after setsid or a
  // daemon's double fork, so it can be stopped when the command ends.
  bool tracked = BecomeSubreaper();
  if (!tracked) {
    Log(LogLevel::kWarn,
        "cannot become a child subreaper ({}): processes the command leaves running will not be "
        "stopped when it ends",
        std::strerror(errno));
  } else if (!(tracked = ProcShowsThisProcess())) {
    Log(LogLevel::kWarn,
        "/proc is not this process's pid namespace: processes the command leaves running will "
        "not be stopped when it ends");
  }
  ChildState child;
  child.pid = StartChild(options, outputs, id, old_mask);
  if (child.pid < 0) {
    Log(LogLevel::kError, "cannot start the command: {}", std::strerror(errno));
    return 1;
  }
  ::setpgid(child.pid, child.pid);
  child.running = true;
  Log(LogLevel::kInfo, "run {} started pid {}", id.job, child.pid);

  auto next_sync = Clock::now() + options.interval;
  std::optional<Clock::time_point> kill_at, term_sent_at;
  // Periodic and on-demand syncs run on their own thread, so a stop signal reaches the command
  // at once even in the middle of a long upload; the sync in flight is then stopped too (the
  // final stage-out takes everything).
  std::atomic<bool> sync_cancel{false};
  std::future<SyncRound> sync_in_flight;
  bool sync_was_triggered = false;
  bool usr1_pending = false;
  auto collect_sync = [&] {
    SyncRound round = sync_in_flight.get();
    if (sync_was_triggered) AnswerTrigger(options.trigger_file, round.AsStatus());
    next_sync = Clock::now() + options.interval;
  };
  while (child.running) {
    // The trigger file is polled twice a second; signals and the child's exit wake us at once.
    auto wake = std::min(next_sync, Clock::now() + std::chrono::milliseconds(500));
    if (kill_at && *kill_at < wake) wake = *kill_at;
    auto wait =
        std::max(std::chrono::milliseconds(1),
                 std::chrono::duration_cast<std::chrono::milliseconds>(wake - Clock::now()));
    timespec ts{static_cast<time_t>(wait.count() / 1000),
                static_cast<long>(wait.count() % 1000) * 1000000};
    int sig = ::sigtimedwait(&mask, nullptr, &ts);
    // Reaps the command and any orphan re-parented to ferry (the subreaper) that has exited.
    std::optional<int> exited;
    ReapExitedChildren(child.pid, &exited);
    if (exited) {
      int status = *exited;
      child.running = false;
      if (WIFEXITED(status)) {
        child.exit_code = WEXITSTATUS(status);
        child.how = "exited " + std::to_string(child.exit_code);
      } else if (WIFSIGNALED(status)) {
        child.exit_code = 128 + WTERMSIG(status);
        child.how = "killed by signal " + std::to_string(WTERMSIG(status));
      }
      break;
    }
    if (sig == SIGTERM || sig == SIGINT) {
      Log(LogLevel::kWarn, "received signal {}: forwarding SIGTERM to the command, {} s grace", sig,
          options.grace.count());
      ::kill(-child.pid, SIGTERM);
      sync_cancel = true;
      TerminateEscaped(child.pid, tracked);
      if (!kill_at) kill_at = Clock::now() + options.grace;
      if (!term_sent_at) term_sent_at = Clock::now();
    } else if (kill_at && Clock::now() >= *kill_at) {
      Log(LogLevel::kWarn, "grace period over: SIGKILL to the command");
      ::kill(-child.pid, SIGKILL);
      kill_at = Clock::now() + std::chrono::hours(24);
    }
    if (sync_in_flight.valid() &&
        sync_in_flight.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
      collect_sync();
    }
    bool triggered = ::access(options.trigger_file.c_str(), F_OK) == 0;
    if (sig == SIGUSR1) usr1_pending = true;  // kept while a sync is in flight
    bool due = usr1_pending || triggered || Clock::now() >= next_sync;
    if (due && !sync_in_flight.valid() && !kill_at) {
      if (triggered) ::unlink((options.trigger_file + ".failed").c_str());
      SyncKind kind = usr1_pending || triggered ? SyncKind::kOnDemand : SyncKind::kPeriodic;
      usr1_pending = false;
      // A request whose files were left out is not answered as done (collect_sync): the
      // command's checkpoint is not (all) at the destination.
      sync_was_triggered = triggered;
      ChildState snapshot = child;
      sync_in_flight = std::async(std::launch::async, [&, kind, snapshot] {
        return SyncAll(registry, outputs, kind, id, options, snapshot, &sync_cancel);
      });
    }
  }
  if (sync_in_flight.valid()) {
    sync_cancel = true;  // the final stage-out supersedes it
    collect_sync();
  }
  Log(LogLevel::kInfo, "command {}; final stage-out", child.how);
  // Nothing the command started may keep writing into the outputs while they are staged out:
  // the grace period runs from ferry's SIGTERM when there was one, else from now.
  StopWhatTheCommandLeft(
      term_sent_at ? *term_sent_at + options.grace : Clock::now() + options.grace, tracked);
  // The final stage-out runs whatever signal started the shutdown; a further SIGTERM/SIGINT
  // stops it within about a second (the last complete manifest stays the newest).
  std::atomic<bool> final_cancel{false};
  SyncRound final_round;
  int second = RunStoppable(mask, final_cancel, [&] {
    final_round = SyncAll(registry, outputs, SyncKind::kFinal, id, options, child, &final_cancel);
  });
  if (second != 0) {
    Log(LogLevel::kError,
        "received signal {} during the final stage-out; stopped it: the outputs' newest complete "
        "manifest is from an earlier sync",
        second);
    ::sigprocmask(SIG_SETMASK, &old_mask, nullptr);
    return 128 + second;
  }
  if (::access(options.trigger_file.c_str(), F_OK) == 0)
    AnswerTrigger(options.trigger_file, final_round.AsStatus());
  ::sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  if (child.exit_code == 0 && !final_round.status.ok()) {
    // A success whose results did not reach their destination is not a success.
    Log(LogLevel::kError, "the command succeeded but the final stage-out failed");
    return 1;
  }
  if (child.exit_code == 0 && final_round.skipped > 0) {
    Log(LogLevel::kError,
        "the command succeeded but {} file(s) could not be uploaded consistently by the final "
        "stage-out (they changed, vanished or could not be read; the manifest lists them as "
        "skipped); first: {}",
        final_round.skipped, final_round.first_skipped);
    return 1;
  }
  return child.exit_code < 0 ? 1 : child.exit_code;
}

}  // namespace ferry::job
