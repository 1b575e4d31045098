// ferry serve prewarm --server URL [--hf REPO[@REV]]... [-r requirements.txt]: fills a running
// ferry serve's cache through its own URLs (proxy/prewarm/prewarm.h).

#include <fstream>
#include <sstream>

#include "cli/command.h"
#include "proxy/prewarm/prewarm.h"

namespace ferry::cli {

namespace {

struct PrewarmFlags {
  std::string server = "http://127.0.0.1:8780";
  std::vector<std::string> hf;
  std::string requirements;
  std::vector<std::string> wheel_filters;
  std::string hf_token_env = "HF_TOKEN";
  int parallel = 4;
};

Status RunPrewarm(Context& ctx, const PrewarmFlags& f) {
  proxy::prewarm::PrewarmOptions o;
  o.server = f.server;
  while (o.server.ends_with("/")) o.server.pop_back();
  o.hf_repos = f.hf;
  o.wheel_filters = f.wheel_filters;
  if (f.hf.empty() && f.requirements.empty()) {
    return Usage(ctx, InvalidArgument("serve prewarm: nothing to do: give --hf REPO or -r FILE"));
  }
  if (f.parallel < 1 || f.parallel > 64) {
    return Usage(ctx, InvalidArgument("serve prewarm: --parallel must be between 1 and 64"));
  }
  o.parallel = f.parallel;
  if (!f.requirements.empty()) {
    std::ifstream in(f.requirements);
    if (!in) {
      return Usage(ctx, InvalidArgument("serve prewarm: cannot read requirements file '" +
                                        f.requirements + "'"));
    }
    std::stringstream text;
    text << in.rdbuf();
    o.requirements = text.str();
  }
  // The token comes from the environment (never argv, where `ps` shows it).
  if (!f.hf_token_env.empty()) o.hf_token = ctx.env->Get(f.hf_token_env).value_or("");
  StopOnSignals();
  o.cancel = ctx.interrupted;
  o.progress = [](const std::string& line) {
    std::fprintf(stderr, "ferry serve prewarm: %s\n", line.c_str());
    std::fflush(stderr);
  };
  FERRY_ASSIGN_OR_RETURN(auto report, proxy::prewarm::Prewarm(o));
  std::fprintf(ctx.out, "prewarmed %d files (%llu bytes), %d failed\n", report.files,
               static_cast<unsigned long long>(report.bytes), report.failed);
  if (ctx.interrupted->load()) return Status(StatusCode::kCancelled, "serve prewarm: interrupted");
  if (report.failed > 0) {
    return Status(StatusCode::kUnavailable,
                  "serve prewarm: " + std::to_string(report.failed) + " failed (see above)");
  }
  return Status();
}

}  // namespace

CLI::App* AddPrewarmCommand(CLI::App& serve, Action& action) {
  auto flags = std::make_shared<PrewarmFlags>();
  auto* cmd = serve.add_subcommand(
      "prewarm", "Fill a running ferry serve's cache with Hugging Face repos or pip requirements");
  cmd->add_option("--server", flags->server, "The ferry serve to fill")->capture_default_str();
  cmd->add_option("--hf", flags->hf, "A repo to download: ORG/NAME[@REV], datasets/ORG/NAME[@REV]");
  cmd->add_option("-r,--requirements", flags->requirements,
                  "A pip requirements file (pinned versions; dependencies are not resolved)");
  cmd->add_option("--wheel-filter", flags->wheel_filters,
                  "Only wheels whose name contains this (e.g. manylinux, cp311); sdists and "
                  "pure-Python wheels are always kept");
  cmd->add_option("--hf-token-env", flags->hf_token_env,
                  "Environment variable holding a Hub token for gated repos")
      ->capture_default_str();
  cmd->add_option("--parallel", flags->parallel, "Files downloaded at once")->capture_default_str();
  cmd->callback(
      [flags, &action] { action = [flags](Context& ctx) { return RunPrewarm(ctx, *flags); }; });
  return cmd;
}

}  // namespace ferry::cli
