#include "job/run_plan.h"

#include <unistd.h>

#include <array>
#include <ctime>
#include <filesystem>
#include <random>

#include "base/strings.h"

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
  for (const char* k : {"FERRY_RUN_ID", "SLURM_JOB_ID", "TORCHELASTIC_RUN_ID", "JOB_ID"}) {
    if (auto v = env.Get(k)) {
      id.job = *v;
      break;
    }
  }
  if (id.job.empty() && env.Get("KUBERNETES_SERVICE_HOST")) id.job = env.GetOr("HOSTNAME", "");
  if (id.job.empty()) {
    std::random_device rd;
    id.job =
        UtcNow("%Y%m%d-%H%M%S") + "-" +
        HexEncode(std::array<uint8_t, 3>{static_cast<uint8_t>(rd()), static_cast<uint8_t>(rd()),
                                         static_cast<uint8_t>(rd())});
  }
  id.attempt =
      env.Get("SLURM_RESTART_COUNT").value_or(env.GetOr("TORCHELASTIC_RESTART_COUNT", "0"));
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

Result<RunPlan> PlanRun(const RunOptions& options, const Environment& env, pid_t pid) {
  RunPlan plan{.options = options, .id = DetectIdentity(env), .outputs = {}};
  std::string& trigger = plan.options.trigger_file;
  if (trigger.empty()) trigger = env.GetOr("TMPDIR", "/tmp") + "/ferry-sync-" + std::to_string(pid);
  trigger = std::filesystem::absolute(trigger).string();
  for (const auto& [dir, tmpl] : options.outputs) {
    FERRY_ASSIGN_OR_RETURN(std::string url, ExpandTemplate(tmpl, plan.id));
    plan.outputs.push_back({std::filesystem::absolute(dir).string(), url, tmpl});
  }
  return plan;
}

std::vector<std::pair<std::string, std::string>> CommandEnvironment(const RunPlan& plan) {
  std::vector<std::pair<std::string, std::string>> env = {{"FERRY_RUN_ID", plan.id.job}};
  for (size_t i = 0; i < plan.outputs.size(); ++i) {
    env.emplace_back("FERRY_OUTPUT_" + std::to_string(i), plan.outputs[i].dir);
    env.emplace_back("FERRY_OUTPUT_URL_" + std::to_string(i), plan.outputs[i].url);
  }
  if (!plan.outputs.empty()) env.emplace_back("FERRY_OUTPUT", plan.outputs[0].dir);
  env.emplace_back("FERRY_SYNC_TRIGGER", plan.options.trigger_file);
  for (size_t i = 0; i < plan.options.inputs.size(); ++i) {
    env.emplace_back("FERRY_INPUT_" + std::to_string(i), plan.options.inputs[i].second);
  }
  return env;
}

}  // namespace ferry::job
