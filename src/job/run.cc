#include "job/run.h"

#include <unistd.h>

#include <filesystem>

#include "base/log.h"
#include "job/lifecycle.h"
#include "job/preflight_rules.h"
#include "job/run_plan.h"
#include "job/run_system_posix.h"
#include "transfer/copy_engine.h"

namespace ferry::job {

namespace {

// The lifecycle's work on real stores: preflight.h, the copy engine, sync.h.
class StoreRunWork final : public RunWork {
 public:
  StoreRunWork(storage::StoreRegistry& registry, const RunPlan& plan)
      : registry_(registry), plan_(plan) {}

  PreflightReport Preflight() override {
    std::vector<std::pair<std::string, std::string>> outputs;
    for (const auto& o : plan_.outputs) outputs.emplace_back(o.dir, o.url);
    return RunPreflight(registry_, plan_.options.inputs, outputs);
  }

  Status StageIn(const std::string& src_url, const std::string& dir,
                 const std::atomic<bool>& cancel) override {
    auto src = registry_.Open(src_url);
    auto dst = registry_.Open(std::filesystem::absolute(dir).string() + "/");
    if (!src.ok() || !dst.ok()) {
      return (!src.ok() ? src.status() : dst.status()).WithContext("stage-in '" + src_url + "'");
    }
    transfer::ProgressCounters counters;
    transfer::CopyResult r =
        transfer::RunCopy(*src, *dst, {.recursive = true, .cancel = &cancel}, counters);
    if (!r.status.ok()) {
      return r.status.WithContext("stage-in '" + src_url + "' to '" + dir + "' failed");
    }
    Log(LogLevel::kInfo, "staged in '{}': {} copied, {} unchanged", src_url, r.report.files_copied,
        r.report.files_skipped);
    return Status();
  }

  SyncRound Sync(SyncKind kind, const ChildState& child, const std::atomic<bool>& cancel) override {
    return SyncAllOutputs(registry_, plan_.outputs, kind, plan_.id, plan_.options, child, &cancel);
  }

 private:
  storage::StoreRegistry& registry_;
  const RunPlan& plan_;
};

}  // namespace

RunOutcome RunJob(const RunOptions& options, storage::StoreRegistry& registry,
                  const Environment& env, const PreflightObserver& on_preflight) {
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
  ThreadTaskRunner tasks;
  StoreRunWork work(registry, *plan);
  RunLifecycle lifecycle(*plan, {clock, signals, processes, tasks}, work);
  return lifecycle.Run(on_preflight);
}

}  // namespace ferry::job
