// ferry run [--in SRC=DIR]... [--out DIR=DST]... [--interval S] [--grace S] -- CMD ARGS...
// The job lifecycle is in src/job/run.h.

#include <chrono>

#include "base/log.h"
#include "cli/command.h"
#include "job/run.h"

namespace ferry::cli {

namespace {

struct RunCliOptions {
  std::vector<std::string> in, out, command;
  int interval = 300;
  int grace = 30;
  bool strict = false;
  bool no_preflight = false;
};

Result<std::pair<std::string, std::string>> SplitPair(const std::string& text, bool last,
                                                      const char* flag, const char* form) {
  size_t eq = last ? text.rfind('=') : text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    return InvalidArgument(std::string(flag) + " '" + text + "' must be " + form);
  }
  return std::pair{text.substr(0, eq), text.substr(eq + 1)};
}

Status RunRun(Context& ctx, const RunCliOptions& o, int* exit_code) {
  job::RunOptions ro{.interval = std::chrono::seconds(o.interval),
                     .grace = std::chrono::seconds(o.grace),
                     .strict = o.strict,
                     .skip_preflight = o.no_preflight,
                     .command = o.command};
  // SRC URLs may hold '=' (parameters): split --in at the last '=', --out at the first.
  for (const auto& s : o.in) {
    FERRY_ASSIGN_OR_RETURN(auto p, SplitPair(s, true, "--in", "SRC=LOCAL_DIR"));
    ro.inputs.push_back(p);
  }
  for (const auto& s : o.out) {
    FERRY_ASSIGN_OR_RETURN(auto p, SplitPair(s, false, "--out", "LOCAL_DIR=DST_URL"));
    ro.outputs.push_back(p);
  }
  if (o.interval < 1 || o.grace < 0)
    return InvalidArgument("--interval must be >= 1, --grace >= 0");
  *exit_code = job::RunJob(ro, *ctx.registry, *ctx.env);
  return Status();
}

}  // namespace

void AddRunCommand(CLI::App& app, Action& action, int* exit_code) {
  auto o = std::make_shared<RunCliOptions>();
  auto* cmd = app.add_subcommand("run",
                                 "Run a training command with stage-in, checkpoint sync "
                                 "and a stage-out that happens even when it fails");
  cmd->add_option("--in", o->in, "SRC=LOCAL_DIR: copy SRC into LOCAL_DIR before starting")
      ->allow_extra_args(false);
  cmd->add_option("--out", o->out,
                  "LOCAL_DIR=DST: sync LOCAL_DIR to DST (templates {job} "
                  "{attempt} {rank} {host} {date})")
      ->allow_extra_args(false);
  cmd->add_option("--interval", o->interval, "Seconds between checkpoint syncs (default 300)");
  cmd->add_option("--grace", o->grace, "Seconds between SIGTERM and SIGKILL (default 30)");
  cmd->add_flag("--strict", o->strict, "Preflight warnings stop the run too");
  cmd->add_flag("--no-preflight", o->no_preflight, "Skip the preflight checks");
  cmd->add_option("command", o->command, "-- CMD ARGS...")->required();
  cmd->callback([o, &action, exit_code] {
    action = [o, exit_code](Context& ctx) { return RunRun(ctx, *o, exit_code); };
  });
}

}  // namespace ferry::cli
