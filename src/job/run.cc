#include "job/run.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "base/json_text.h"
#include "base/log.h"
#include "base/strings.h"
#include "base/time_format.h"
#include "job/job_records.h"
#include "job/lifecycle.h"
#include "job/preflight_rules.h"
#include "job/resume.h"
#include "job/run_hooks.h"
#include "job/run_plan.h"
#include "job/run_system_posix.h"
#include "transfer/copy_engine.h"
#include "transfer/progress.h"

namespace ferry::job {

namespace {

// The lifecycle's work on real stores: job_records.h, preflight.h, resume.h, the copy engine,
// sync.h.
class StoreRunWork final : public RunWork {
 public:
  StoreRunWork(storage::StoreRegistry& registry, RunHooks* hooks, const RunEventObserver& on_event,
               bool progress_lines)
      : registry_(registry), hooks_(hooks), on_event_(on_event), progress_lines_(progress_lines) {}

  Result<int> CountAttempt(const RunPlan& plan) override {
    const Output& first = plan.outputs.front();
    FERRY_ASSIGN_OR_RETURN(auto records, registry_.Open(first.tmpl));
    char host[256] = {0};
    ::gethostname(host, sizeof host - 1);
    std::random_device rd;
    std::string token = fmt::format("{}-{}-{:08x}", host, ::getpid(), rd());
    for (char& c : token) {
      if (c == '/' || c == '.') c = '_';
    }
    nlohmann::json details = {{"run_id", plan.id.job},
                              {"rank", plan.id.rank},
                              {"host", host},
                              {"pid", ::getpid()},
                              {"claimed_at", FormatIso8601(std::chrono::system_clock::now())}};
    std::mt19937 random(rd());
    return ClaimAttempt(
        *records.store, first.records_key, plan.id.rank,
        {.token = token, .details = JsonText(details) + "\n", .back_off = [&random](int n) {
           // 20-200 ms, longer after every lost race.
           std::uniform_int_distribution<int> ms(20, 200);
           std::this_thread::sleep_for(std::chrono::milliseconds(ms(random) * (n + 1)));
         }});
  }

  PreflightReport Preflight(const RunPlan& plan) override {
    std::vector<std::pair<std::string, std::string>> outputs;
    for (const auto& o : plan.outputs) outputs.emplace_back(o.dir, o.url);
    PreflightReport report = RunPreflight(registry_, plan.options.inputs, outputs);
    for (const auto& o : plan.outputs) CheckDestinationOwner(plan, o, report);
    if (auto line = TmpdirTooLong(plan.tmpdir)) report.warnings.push_back(*line);
    if (auto line = UnstableResumeWarning(plan)) report.warnings.push_back(*line);
    return report;
  }

  Result<std::optional<ResumeSource>> Resume(const RunPlan& plan,
                                             const std::atomic<bool>& cancel) override {
    std::error_code ec;
    std::filesystem::create_directories(plan.options.resume_dir, ec);
    if (ec) {
      return Status(StatusCode::kFailedPrecondition, "cannot create it: " + ec.message());
    }
    const Output& out = plan.outputs[plan.resume_output];
    FERRY_ASSIGN_OR_RETURN(auto dst, registry_.Open(out.url));
    FERRY_ASSIGN_OR_RETURN(
        auto source,
        FindResumeSource(registry_, dst.store->UrlFor(out.records_key + out.pointer_name),
                         plan.id.job));
    if (!source) return source;
    FERRY_ASSIGN_OR_RETURN(StagedResume staged,
                           StageResume(registry_, *source, plan.options.resume_dir, cancel));
    Log(LogLevel::kInfo, "resume: {} file(s), {}: {} copied, {} already there and verified",
        staged.files, HumanBytes(staged.bytes), staged.copied, staged.unchanged);
    return source;
  }

  Status StageIn(const std::string& src_url, const std::string& dir,
                 const std::atomic<bool>& cancel) override {
    auto src = registry_.Open(src_url);
    auto dst = registry_.Open(std::filesystem::absolute(dir).string() + "/");
    if (!src.ok() || !dst.ok()) {
      return (!src.ok() ? src.status() : dst.status()).WithContext("stage-in '" + src_url + "'");
    }
    transfer::ProgressCounters counters;
    transfer::CopyResult r;
    {
      transfer::ProgressReporter progress(counters, progress_lines_
                                                        ? transfer::ProgressMode::kLines
                                                        : transfer::ProgressMode::kNone);
      r = transfer::RunCopy(*src, *dst, {.recursive = true, .cancel = &cancel}, counters);
    }
    if (!r.status.ok()) {
      return r.status.WithContext("stage-in '" + src_url + "' to '" + dir + "' failed");
    }
    if (on_event_) {
      on_event_({.kind = RunEvent::Kind::kStageIn,
                 .src = src_url,
                 .dst = dir,
                 .files_copied = r.report.files_copied,
                 .files_unchanged = r.report.files_skipped,
                 .bytes_copied = r.report.bytes_copied,
                 .seconds = r.report.seconds});
    }
    return Status();
  }

  SyncRound Sync(const RunPlan& plan, SyncKind kind, const ChildState& child,
                 const std::atomic<bool>& cancel) override {
    SyncContext ctx{
        .id = plan.id, .options = plan.options, .child = child, .resumed_from = plan.resumed_from};
    SyncRound round = SyncAllOutputs(registry_, plan.outputs, kind, ctx, history_, &cancel,
                                     progress_lines_ && kind != SyncKind::kPeriodic);
    if (on_event_) {
      static constexpr const char* kKinds[] = {"periodic", "on-demand", "final"};
      for (const auto& o : round.outputs) {
        on_event_({.kind = RunEvent::Kind::kSync,
                   .sync_kind = kKinds[static_cast<int>(kind)],
                   .src = o.dir,
                   .dst = o.url,
                   .files_copied = o.uploaded,
                   .files_unchanged = o.unchanged,
                   .bytes_copied = o.bytes_uploaded,
                   .left_out = o.left_out,
                   .seconds = o.seconds,
                   .status = o.status});
      }
    }
    if (hooks_) hooks_->AfterSync(plan, kind, round);
    return round;
  }

  std::vector<std::pair<std::string, std::string>> ExtraEnvironment(const RunPlan& plan) override {
    return hooks_ ? hooks_->BeforeStart(plan) : std::vector<std::pair<std::string, std::string>>{};
  }

 private:
  // A destination holding another job's manifest is never silently mixed with this run's files.
  void CheckDestinationOwner(const RunPlan& plan, const Output& o, PreflightReport& report) {
    auto dst = registry_.Open(storage::DirectoryPrefix(o.url));
    if (!dst.ok()) return;  // RunPreflight reported it
    const std::string key = dst->key + "_ferry/" + ManifestName(plan.id.rank);
    auto text = dst->store->ReadAll(key);
    if (!text.ok()) return;
    auto owner = ManifestOwner(*text);
    if (!owner) {
      report.errors.push_back("output " + o.url + ": '" + dst->store->UrlFor(key) +
                              "' is not a ferry manifest; choose another destination");
    } else if (owner->first != plan.id.job) {
      report.errors.push_back(
          "output " + o.url + " already holds the results of run '" + owner->first + "' (attempt " +
          owner->second +
          "); put {job} (and {attempt}) in the destination template or choose another one");
    } else if (owner->second != plan.id.attempt) {
      report.lines.push_back("output " + o.url + ": attempt " + plan.id.attempt +
                             " continues attempt " + owner->second +
                             "'s destination (the template has no {attempt})");
    }
  }

  storage::StoreRegistry& registry_;
  RunHooks* hooks_;                   // may be null
  const RunEventObserver& on_event_;  // may be empty
  const bool progress_lines_;
  std::vector<OutputHistory> history_;  // only the sync task touches it, one sync at a time
};

}  // namespace

RunOutcome RunJob(const RunOptions& options, storage::StoreRegistry& registry,
                  const Environment& env, const PreflightObserver& on_preflight, RunHooks* hooks,
                  const RunEventObserver& on_event, bool progress_lines) {
  // Signals are held from the start (and restored last): one that comes during preflight or
  // stage-in stays pending until a phase takes it.
  PosixSignalSource signals;
  // Mistakes in how inputs and outputs are written are usage errors, before anything is created.
  auto checked = CheckRunSides(options);
  if (!checked.ok()) return {2, checked.status()};
  if (Status apart = CheckInputsApartFromOutputs(*checked); !apart.ok()) return {2, apart};
  auto plan = PlanRun(*checked, env, ::getpid());
  if (!plan.ok()) return {2, plan.status()};
  SteadyClock clock;
  PosixProcessLauncher processes(
      signals.original_mask(),
      {.grace = plan->options.grace, .signal_group = plan->options.signal_group});
  if (hooks && hooks->output_sink()) processes.CaptureOutput(hooks->output_sink());
  ThreadTaskRunner tasks;
  StoreRunWork work(registry, hooks, on_event, progress_lines);
  RunLifecycle lifecycle(*plan, {clock, signals, processes, tasks}, work);
  RunOutcome outcome = lifecycle.Run(on_preflight);
  if (hooks) {
    // The command and what it left running have ended: the output's last bytes are in the
    // pipes (a writer that could not be killed does not hold the run up for long).
    processes.FinishCapture(std::chrono::seconds(2));
    hooks->Ended(lifecycle.child(), outcome.exit_code);
  }
  return outcome;
}

}  // namespace ferry::job
