#include "cli/app.h"

#include <csignal>
#include <cstdio>

#include "base/log.h"
#include "base/redact.h"
#include "cli/command.h"
#include "cli/usage_hints.h"

#ifndef FERRY_VERSION
#define FERRY_VERSION "dev"
#endif

namespace ferry::cli {

int RunFerry(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);
  CLI::App app{"ferry: move training data and results between storage and GPU jobs"};
  app.set_version_flag("--version", "ferry " FERRY_VERSION);
  app.require_subcommand(1);
  // -v and --trace-http also after the subcommand (ferry cp -v ...): its subcommands (added
  // below) inherit this.
  app.fallthrough();
  int verbosity = 0;
  bool trace_http = false;
  app.add_flag("-v,--verbose", verbosity, "More log output (-v info, -vv debug, -vvv trace)");
  app.add_flag("--trace-http", trace_http,
               "Log HTTP request and response headers, secrets redacted (implies -vvv)");
  // S3 settings for s3:// URLs written without a PROFILE: prefix (docs/configuration.md).
  backends::BackendOptions::S3Flags s3;
  app.add_option("--profile", s3.profile, "AWS profile for s3:// URLs (default: AWS_PROFILE)");
  app.add_option("--endpoint-url", s3.endpoint_url,
                 "S3 endpoint for s3:// URLs, e.g. http://nas:7480 (default: AWS_ENDPOINT_URL)");
  app.add_option("--region", s3.region, "S3 region for s3:// URLs (default: AWS_REGION)");
  app.add_flag("--no-sign-request", s3.no_sign_request,
               "Send s3:// requests unsigned (public buckets)");
  app.fallthrough();  // global flags may also follow the command: ferry ls --profile nas URL

  Action action;
  AddLsCommand(app, action);
  AddStatCommand(app, action);
  AddCatCommand(app, action);
  AddCpCommand(app, action);
  AddRmCommand(app, action);
  AddMbCommand(app, action);
  AddAuthCommand(app, action);
  AddDoctorCommand(app, action);
  AddSysmetricsCommand(app, action);
  AddTrackCommand(app, action);
  AddShardCommand(app, action);
  AddServeCommand(app, action);
  int run_exit_code = -1;
  AddRunCommand(app, action, &run_exit_code);
  AddMountCommands(app, action, &run_exit_code);

  bool known = true;
  if (argc > 1 && argv[1][0] != '-') {
    try {
      app.get_subcommand(argv[1]);
    } catch (const CLI::OptionNotFound&) {
      known = false;
    }
  }
  if (!known) {
    std::fprintf(stderr, "ferry: usage error: unknown command '%s' (see ferry --help)\n",
                 Redact(argv[1]).c_str());
    return kExitUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // CLI11's own words for an unknown flag are "argument was not expected: VALUE"; name the
    // flag and the nearest known one instead.
    const std::vector<std::string> args(argv + 1, argv + argc);
    std::string hint = ExplainUsageError(app, args);
    if (hint.empty())
      hint = std::string(e.what()) + " (see " + UsageCommand(app, args) + " --help)";
    std::fprintf(stderr, "ferry: usage error: %s\n", Redact(hint).c_str());
    return kExitUsage;
  }

  if (trace_http) verbosity = 3;
  SetLogLevel(static_cast<LogLevel>(
      std::min(static_cast<int>(LogLevel::kWarn) + verbosity, static_cast<int>(LogLevel::kTrace))));
  auto env = std::make_shared<ProcessEnvironment>();
  storage::StoreRegistry registry;
  backends::BackendOptions backend_options{.env = env, .trace_http = trace_http};
  backend_options.s3 = s3;
  if (Status flags = backends::CheckS3Flags(backend_options); !flags.ok()) {
    std::fprintf(stderr, "ferry: error: %s\n", Redact(flags.message()).c_str());
    return kExitUsage;
  }
  backend_options.retry.cancel = &InterruptFlag();
  backends::RegisterDefaultBackends(registry, backend_options);
  Context ctx{.env = env,
              .backend_options = backend_options,
              .registry = &registry,
              .interrupted = &InterruptFlag()};

  Status s = action ? action(ctx) : Internal("no command");
  std::fflush(stdout);
  if (s.code() == StatusCode::kCancelled && ctx.output_closed) return kExitOk;
  if (s.code() == StatusCode::kCancelled) {
    std::fprintf(stderr, "ferry: %s\n", Redact(s.message()).c_str());
    return 130;  // like a shell after SIGINT
  }
  if (!s.ok()) {
    std::string line = Redact(s.message());
    for (char& c : line) {
      if (c == '\n' || c == '\r') c = ' ';
    }
    std::fprintf(stderr, "ferry: error: %s\n", line.c_str());
    return ctx.usage_error ? kExitUsage : kExitFailure;
  }
  return run_exit_code >= 0 ? run_exit_code : kExitOk;
}

}  // namespace ferry::cli
