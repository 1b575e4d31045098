// ferry run [--spec FILE] [--in SRC=DIR]... [--out DIR=DST]... [--resume DIR] [--interval S]
//           [--grace S] [--signal-group] [--delete-after-upload GLOB]... [--trigger-file PATH]
//           [--track URL [--experiment NAME] [--run-name NAME] [--system-metrics-interval S]]
//           [--job NAME] [--json] [--no-progress] -- CMD ARGS...
// The job lifecycle is in src/job/run.h; spec files in src/job/spec.h; the checks of how inputs
// and outputs are written in src/job/preflight_rules.h; --track in src/job/track/run_tracker.h.

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <memory>

#include "base/log.h"
#include "base/redact.h"
#include "base/strings.h"
#include "cli/command.h"
#include "cli/render.h"
#include "job/run.h"
#include "job/spec.h"
#include "job/track/run_tracker.h"

namespace ferry::cli {

namespace {

struct RunCliOptions {
  std::string spec;
  std::vector<std::string> in, out, delete_after_upload, command;
  std::optional<int> interval, grace;
  std::string trigger_file;
  std::string resume;
  std::string job;
  bool strict = false;
  bool no_preflight = false;
  bool follow_links = false;
  bool signal_group = false;
  bool json = false;
  bool no_progress = false;
  std::string track, experiment, run_name;
  std::optional<int> system_metrics_interval;
};

Result<std::pair<std::string, std::string>> SplitPair(const std::string& text, bool last,
                                                      const char* flag, const char* form) {
  size_t eq = last ? text.rfind('=') : text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    return InvalidArgument(std::string(flag) + " '" + text + "' must be " + form);
  }
  return std::pair{text.substr(0, eq), text.substr(eq + 1)};
}

// The spec file (if any) first; flags add inputs, outputs and globs, and override the rest.
Result<job::RunOptions> Combine(const RunCliOptions& o) {
  job::RunOptions ro;
  if (!o.spec.empty()) {
    FERRY_ASSIGN_OR_RETURN(ro, job::LoadJobSpec(o.spec));
  }
  // SRC URLs may hold '=' (parameters): split --in at the last '=', --out at the first.
  for (const auto& s : o.in) {
    FERRY_ASSIGN_OR_RETURN(auto p, SplitPair(s, true, "--in", "SRC=LOCAL_DIR"));
    ro.inputs.push_back(p);
  }
  for (const auto& s : o.out) {
    FERRY_ASSIGN_OR_RETURN(auto p, SplitPair(s, false, "--out", "LOCAL_DIR=DST_URL"));
    ro.outputs.push_back(p);
  }
  if (o.interval) {
    if (*o.interval < 1) return InvalidArgument("--interval must be >= 1");
    ro.interval = std::chrono::seconds(*o.interval);
  }
  if (o.grace) {
    if (*o.grace < 0) return InvalidArgument("--grace must be >= 0");
    ro.grace = std::chrono::seconds(*o.grace);
  }
  ro.strict = ro.strict || o.strict;
  ro.follow_symlinks = ro.follow_symlinks || o.follow_links;
  ro.skip_preflight = ro.skip_preflight || o.no_preflight;
  ro.signal_group = ro.signal_group || o.signal_group;
  ro.delete_after_upload.insert(ro.delete_after_upload.end(), o.delete_after_upload.begin(),
                                o.delete_after_upload.end());
  if (!o.trigger_file.empty()) ro.trigger_file = o.trigger_file;
  if (!o.track.empty()) ro.track.url = o.track;
  if (!o.experiment.empty()) ro.track.experiment = o.experiment;
  if (!o.run_name.empty()) ro.track.run_name = o.run_name;
  if (o.system_metrics_interval) ro.track.system_metrics_interval = o.system_metrics_interval;
  if (ro.track.url.empty() && (!ro.track.experiment.empty() || !ro.track.run_name.empty() ||
                               ro.track.system_metrics_interval)) {
    return InvalidArgument(
        "--experiment, --run-name and --system-metrics-interval need --track URL");
  }
  if (!ro.track.url.empty()) {
    FERRY_RETURN_IF_ERROR(job::track::CheckTrackUrl(ro.track.url));
    if (ro.track.system_metrics_interval && *ro.track.system_metrics_interval < 0) {
      return InvalidArgument("--system-metrics-interval must be >= 0 (0 = off)");
    }
  }
  if (!o.resume.empty()) ro.resume_dir = o.resume;
  if (!o.job.empty()) ro.job = o.job;
  if (!ro.resume_dir.empty()) {
    auto parsed = storage::ParseUrl(ro.resume_dir);
    if (!parsed.ok() || parsed->scheme != storage::Scheme::kLocal) {
      return InvalidArgument("--resume '" + storage::RedactUrl(ro.resume_dir) +
                             "' must be a local directory (the checkpoints come from the job's "
                             "--out destination)");
    }
  }
  if (!o.command.empty()) ro.command = o.command;
  if (ro.command.empty()) {
    return InvalidArgument("no command to run: give it after '--' or as 'command:' in --spec");
  }
  // URLs, swapped sides and nested directories: checked by job::RunJob before anything is
  // created (preflight_rules.h), reported as usage errors.
  return ro;
}

// The preflight block: always on problems, with -v otherwise.
void RenderPreflight(const job::PreflightReport& report, bool ok) {
  if (ok && report.warnings.empty() && !LogEnabled(LogLevel::kInfo)) return;
  std::string block = "ferry: preflight:\n";
  for (const auto& l : report.lines) block += "  ok:      " + l + "\n";
  for (const auto& w : report.warnings) block += "  warning: " + w + "\n";
  for (const auto& e : report.errors) block += "  error:   " + e + "\n";
  std::fputs(Redact(block).c_str(), stderr);
}

// One line per stage-in and per output synced, on stderr (the command owns stdout): text by
// default, a JSON object with --json. A failed sync is not repeated here in text: its error
// line was logged as it happened.
void RenderEvent(const job::RunEvent& e, bool json) {
  const bool stage_in = e.kind == job::RunEvent::Kind::kStageIn;
  if (json) {
    Json j = {{"event", stage_in ? "stage-in" : "sync"}};
    if (!stage_in) j["sync"] = e.sync_kind;
    j["src"] = storage::RedactUrl(e.src);
    j["dst"] = storage::RedactUrl(e.dst);
    j["files_copied"] = e.files_copied;
    j["files_unchanged"] = e.files_unchanged;
    j["bytes_copied"] = e.bytes_copied;
    if (!stage_in) j["left_out"] = e.left_out;
    j["seconds"] = e.seconds;
    j["ok"] = e.status.ok();
    if (!e.status.ok()) j["error"] = e.status.message();
    std::fputs(JsonLine(j).c_str(), stderr);
    return;
  }
  if (!e.status.ok()) return;
  std::string line =
      stage_in
          ? fmt::format(
                "ferry: staged in '{}' -> '{}': {} file(s) copied ({}), {} unchanged, "
                "in {:.1f} s\n",
                storage::RedactUrl(e.src), e.dst, e.files_copied, HumanBytes(e.bytes_copied),
                e.files_unchanged, e.seconds)
          : fmt::format(
                "ferry: {} sync '{}' -> '{}': {} file(s) uploaded ({}), {} unchanged{}, "
                "in {:.1f} s\n",
                e.sync_kind, e.src, storage::RedactUrl(e.dst), e.files_copied,
                HumanBytes(e.bytes_copied), e.files_unchanged,
                e.left_out ? fmt::format(", {} left out (changing; next sync)", e.left_out) : "",
                e.seconds);
  std::fputs(Redact(line).c_str(), stderr);
}

Status RunRun(Context& ctx, const RunCliOptions& o, int* exit_code) {
  auto combined = Combine(o);
  if (!combined.ok()) return Usage(ctx, combined.status());
  std::unique_ptr<job::track::RunTracker> run_tracker;
  if (const auto& t = combined->track; !t.url.empty()) {
    job::track::TrackOptions to{.url = t.url, .experiment = t.experiment, .run_name = t.run_name};
    if (t.system_metrics_interval) {
      to.system_metrics_interval = std::chrono::seconds(*t.system_metrics_interval);
    }
    run_tracker = std::make_unique<job::track::RunTracker>(to, *ctx.registry, *ctx.env);
  }
  const bool json = o.json;
  job::RunOutcome outcome = job::RunJob(
      *combined, *ctx.registry, *ctx.env, RenderPreflight, run_tracker.get(),
      [json](const job::RunEvent& e) { RenderEvent(e, json); }, !o.json && !o.no_progress);
  if (o.json) {
    Json end = {{"event", "end"},
                {"exit_code", outcome.error.ok()                ? outcome.exit_code
                              : outcome.exit_code == kExitUsage ? kExitUsage
                                                                : kExitFailure},
                {"ok", outcome.error.ok() && outcome.exit_code == 0}};
    if (!outcome.error.ok()) end["error"] = outcome.error.message();
    std::fputs(JsonLine(end).c_str(), stderr);
  }
  if (outcome.exit_code == kExitUsage) return Usage(ctx, outcome.error);
  *exit_code = outcome.exit_code;
  return outcome.error;  // when set: one error line, exit 1
}

}  // namespace

void AddRunCommand(CLI::App& app, Action& action, int* exit_code) {
  auto o = std::make_shared<RunCliOptions>();
  auto* cmd = app.add_subcommand("run",
                                 "Run a training command with stage-in, checkpoint sync "
                                 "and a stage-out that happens even when it fails");
  cmd->add_option("--spec", o->spec, "Job spec file (YAML or JSON) with the settings below");
  cmd->add_option("--in", o->in, "SRC=LOCAL_DIR: copy SRC into LOCAL_DIR before starting")
      ->allow_extra_args(false);
  cmd->add_option("--out", o->out,
                  "LOCAL_DIR=DST: sync LOCAL_DIR to DST (templates {job} "
                  "{attempt} {rank} {host} {date})")
      ->allow_extra_args(false);
  cmd->add_option("--interval", o->interval, "Seconds between checkpoint syncs (default 300)");
  cmd->add_option("--grace", o->grace,
                  "Seconds from a stop signal (SIGTERM to CMD's main process) to SIGKILL of its "
                  "whole process group (default 30)");
  cmd->add_flag("--signal-group", o->signal_group,
                "On SIGTERM/SIGINT, send SIGTERM to CMD's whole process group at once (default: "
                "its main process only, so DataLoader workers keep serving while it saves)");
  cmd->add_option("--delete-after-upload", o->delete_after_upload,
                  "GLOB: delete local output files matching it once their upload is verified")
      ->allow_extra_args(false);
  cmd->add_option("--trigger-file", o->trigger_file,
                  "Creating this file asks for a sync now (default $TMPDIR/ferry-sync-<pid>, "
                  "given to CMD as FERRY_SYNC_TRIGGER)");
  cmd->add_option("--resume", o->resume,
                  "DIR: before starting, copy the job's newest complete checkpoint set from an "
                  "earlier attempt into DIR (usually an --out dir); FERRY_RESUME_DIR tells CMD")
      ->allow_extra_args(false);
  cmd->add_option("--job", o->job,
                  "The job's name, the same on every start ({job}; default: FERRY_RUN_ID, Slurm, "
                  "TorchElastic or JOB_ID, else generated): what --resume resumes");
  cmd->add_flag("--strict", o->strict, "Preflight warnings stop the run too");
  cmd->add_flag("--no-preflight", o->no_preflight,
                "Skip the preflight checks (swapped or nested --in/--out are still usage errors)");
  cmd->add_flag("-L,--follow-links", o->follow_links,
                "Syncs follow symbolic links in output dirs, also out of them (default: such "
                "links are never uploaded)");
  cmd->add_option("--track", o->track,
                  "URL of an MLflow tracking server (ferry serve): the job becomes a run there "
                  "(system metrics, output log, checkpoints, exit status); CMD gets "
                  "MLFLOW_TRACKING_URI and MLFLOW_RUN_ID");
  cmd->add_option("--experiment", o->experiment,
                  "With --track: the experiment (default $MLFLOW_EXPERIMENT_NAME, else Default)");
  cmd->add_option("--run-name", o->run_name, "With --track: the run's name (default the job id)");
  cmd->add_option("--system-metrics-interval", o->system_metrics_interval,
                  "With --track: seconds between system-metric samples (default 10, 0 = off)");
  cmd->add_flag("--json", o->json,
                "ferry's own lines (one per stage-in and per output synced, then the end) as "
                "JSON objects on stderr, one per line; the command's output is untouched");
  cmd->add_flag("--no-progress", o->no_progress,
                "No progress lines during long stage-ins and final syncs (the summary lines stay)");
  cmd->add_option("command", o->command, "-- CMD ARGS...");
  cmd->callback([o, &action, exit_code] {
    action = [o, exit_code](Context& ctx) { return RunRun(ctx, *o, exit_code); };
  });
}

}  // namespace ferry::cli
