#include "job/run_plan.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <ctime>
#include <filesystem>
#include <random>

#include "base/strings.h"
#include "job/job_records.h"

namespace ferry::job {

namespace {

std::string UtcNow(const char* format) {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, format, &tm);
  return buf;
}

}  // namespace

RunIdentity DetectIdentity(const Environment& env) {
  RunIdentity id;
  // A Slurm array task is "<array job>_<task>", as squeue and sacct name it (each task's own
  // SLURM_JOB_ID is a number that says nothing about the array).
  auto array = env.Get("SLURM_ARRAY_JOB_ID");
  auto task = env.Get("SLURM_ARRAY_TASK_ID");
  if (auto v = env.Get("FERRY_RUN_ID")) {
    id.job = *v;
    id.job_from = "FERRY_RUN_ID";
  } else if (array && task && !array->empty() && !task->empty()) {
    id.job = *array + "_" + *task;
    id.job_from = "SLURM_ARRAY_JOB_ID_SLURM_ARRAY_TASK_ID";
  } else {
    for (const char* k : {"SLURM_JOB_ID", "TORCHELASTIC_RUN_ID", "JOB_ID"}) {
      if (auto v = env.Get(k)) {
        id.job = *v;
        id.job_from = k;
        break;
      }
    }
  }
  if (id.job.empty() && env.Get("KUBERNETES_SERVICE_HOST")) {
    id.job = env.GetOr("HOSTNAME", "");
    id.job_from = "the Kubernetes pod's name";
    id.job_stable = false;  // a Job's retried pod is named anew
  }
  if (id.job.empty()) {
    id.job_from = "generated";
    id.job_stable = false;
    std::random_device rd;
    id.job =
        UtcNow("%Y%m%d-%H%M%S") + "-" +
        HexEncode(std::array<uint8_t, 3>{static_cast<uint8_t>(rd()), static_cast<uint8_t>(rd()),
                                         static_cast<uint8_t>(rd())});
  }
  id.attempt = env.Get("SLURM_RESTART_COUNT").value_or(env.GetOr("TORCHELASTIC_RESTART_COUNT", ""));
  id.rank = env.Get("RANK").value_or(env.GetOr("SLURM_PROCID", "0"));
  char host[256] = {0};
  ::gethostname(host, sizeof host - 1);
  id.host = host;
  id.date = UtcNow("%Y-%m-%d");
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

Status CheckJobName(const std::string& name) {
  auto ok = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
  };
  if (name.empty() || name.size() > 128 || !std::all_of(name.begin(), name.end(), ok) ||
      name[0] == '.' || name[0] == '_' || name[0] == '-') {
    return InvalidArgument("--job '" + name +
                           "': a job name is 1-128 letters, digits, '.', '_' or '-', starting "
                           "with a letter or digit");
  }
  return Status();
}

std::optional<std::string> UnstableResumeWarning(const RunPlan& plan) {
  if (plan.options.resume_dir.empty() || plan.id.job_stable) return std::nullopt;
  return "--resume without a stable job id: this start is job '" + plan.id.job + "' (" +
         plan.id.job_from +
         "), so a restart gets another id and starts over instead of resuming; give --job NAME "
         "(or FERRY_RUN_ID) the same on every start (Slurm, TorchElastic and JOB_ID give one)";
}

Result<RunPlan> PlanRun(const RunOptions& options, const Environment& env, pid_t pid) {
  RunPlan plan{.options = options, .id = DetectIdentity(env), .outputs = {}};
  if (!options.job.empty()) {
    FERRY_RETURN_IF_ERROR(CheckJobName(options.job));
    plan.id.job = options.job;
    plan.id.job_from = "--job";
    plan.id.job_stable = true;
  }
  plan.tmpdir = env.GetOr("TMPDIR", "/tmp");
  std::string& trigger = plan.options.trigger_file;
  if (trigger.empty()) trigger = plan.tmpdir + "/ferry-sync-" + std::to_string(pid);
  trigger = std::filesystem::absolute(trigger).string();
  // Every template is checked now, whatever the attempt turns out to be.
  RunIdentity probe = plan.id;
  if (probe.attempt.empty()) probe.attempt = "0";
  for (size_t i = 0; i < options.outputs.size(); ++i) {
    const auto& [dir, tmpl] = options.outputs[i];
    FERRY_RETURN_IF_ERROR(ExpandTemplate(tmpl, probe).status());
    FERRY_ASSIGN_OR_RETURN(std::string records, JobRecordsKey(tmpl, plan.id));
    plan.outputs.push_back({.dir = std::filesystem::absolute(dir).lexically_normal().string(),
                            .url = "",
                            .tmpl = tmpl,
                            .records_key = records,
                            .pointer_name = LatestPointerName(plan.id.rank, i)});
    while (plan.outputs.back().dir.size() > 1 && plan.outputs.back().dir.back() == '/') {
      plan.outputs.back().dir.pop_back();
    }
  }
  if (!options.resume_dir.empty()) {
    if (plan.outputs.empty()) {
      return InvalidArgument("--resume '" + options.resume_dir +
                             "' needs an --out whose destination holds the job's checkpoints");
    }
    std::string resume = std::filesystem::absolute(options.resume_dir).lexically_normal().string();
    while (resume.size() > 1 && resume.back() == '/') resume.pop_back();
    plan.options.resume_dir = resume;
    for (size_t i = 0; i < plan.outputs.size(); ++i) {
      if (plan.outputs[i].dir == resume) {
        plan.resume_output = i;
        break;
      }
    }
  }
  if (!NeedsAttemptCount(plan)) FERRY_RETURN_IF_ERROR(AssignAttempt(plan, std::nullopt));
  return plan;
}

bool NeedsAttemptCount(const RunPlan& plan) {
  return plan.id.attempt.empty() && !plan.outputs.empty();
}

bool AttemptMatters(const RunPlan& plan) {
  if (!plan.options.resume_dir.empty()) return true;
  return std::any_of(plan.outputs.begin(), plan.outputs.end(),
                     [](const Output& o) { return o.tmpl.find("{attempt}") != std::string::npos; });
}

Status AssignAttempt(RunPlan& plan, std::optional<int> counted) {
  if (counted) plan.id.attempt = std::to_string(*counted);
  if (plan.id.attempt.empty()) plan.id.attempt = "0";
  for (auto& o : plan.outputs) {
    FERRY_ASSIGN_OR_RETURN(o.url, ExpandTemplate(o.tmpl, plan.id));
  }
  return Status();
}

std::vector<std::pair<std::string, std::string>> CommandEnvironment(const RunPlan& plan) {
  std::vector<std::pair<std::string, std::string>> env = {{"FERRY_RUN_ID", plan.id.job},
                                                          {"FERRY_ATTEMPT", plan.id.attempt},
                                                          {"FERRY_RANK", plan.id.rank}};
  for (size_t i = 0; i < plan.outputs.size(); ++i) {
    env.emplace_back("FERRY_OUTPUT_" + std::to_string(i), plan.outputs[i].dir);
    env.emplace_back("FERRY_OUTPUT_URL_" + std::to_string(i), plan.outputs[i].url);
  }
  if (!plan.outputs.empty()) env.emplace_back("FERRY_OUTPUT", plan.outputs[0].dir);
  env.emplace_back("FERRY_SYNC_TRIGGER", plan.options.trigger_file);
  for (size_t i = 0; i < plan.options.inputs.size(); ++i) {
    env.emplace_back("FERRY_INPUT_" + std::to_string(i), plan.options.inputs[i].second);
  }
  if (!plan.options.resume_dir.empty()) {
    env.emplace_back("FERRY_RESUME_DIR", plan.options.resume_dir);
    env.emplace_back("FERRY_RESUMED", plan.resumed_from ? "1" : "0");
    if (plan.resumed_from) {
      env.emplace_back("FERRY_RESUME_ATTEMPT", plan.resumed_from->attempt);
      env.emplace_back("FERRY_RESUME_MANIFEST", plan.resumed_from->manifest_url);
    }
  }
  env.insert(env.end(), plan.extra_env.begin(), plan.extra_env.end());
  return env;
}

}  // namespace ferry::job
