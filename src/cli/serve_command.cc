// ferry serve --data URL: the caching proxy / tracker server (issue 13). For now it opens the
// data store (to validate it), serves /healthz and /metrics, and stops on SIGINT/SIGTERM.
// Later modules add routes through a RouteRegistrar (server/router.h) in RunServe.

#include <charconv>
#include <chrono>
#include <fstream>
#include <thread>

#include "base/strings.h"
#include "cli/command.h"
#include "server/server.h"
#include "storage/url.h"

namespace ferry::cli {

namespace {

// The port `ferry serve` listens on by default (loopback only).
constexpr uint16_t kDefaultPort = 8780;
// How long in-flight responses may run on after SIGINT/SIGTERM.
constexpr auto kShutdownGrace = std::chrono::seconds(10);

struct ServeFlags {
  std::string data;
  std::string listen = "127.0.0.1:" + std::to_string(kDefaultPort);
  std::string token_file;
  int threads = 2;
  bool allow_remote = false;
};

// "HOST:PORT", "[V6]:PORT" or ":PORT" (loopback).
Status ParseListen(Context& ctx, const std::string& text, server::ServerOptions* o) {
  auto bad = [&] {
    return Usage(ctx, InvalidArgument("serve: --listen '" + text + "' is not HOST:PORT"));
  };
  size_t colon = text.rfind(':');
  if (colon == std::string::npos) return bad();
  std::string host = text.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host.empty()) host = "127.0.0.1";
  auto port = ParseUint64(text.substr(colon + 1));
  if (!port || *port > 65535) return bad();
  o->host = host;
  o->port = static_cast<uint16_t>(*port);
  return Status();
}

// One token per line; blank lines and lines starting with '#' are skipped.
Status ReadTokens(Context& ctx, const std::string& path, std::vector<std::string>* tokens) {
  std::ifstream in(path);
  if (!in) return Usage(ctx, InvalidArgument("serve: cannot read --token-file '" + path + "'"));
  std::string line;
  while (std::getline(in, line)) {
    std::string_view t = Trim(line);
    if (t.empty() || t[0] == '#') continue;
    tokens->emplace_back(t);
  }
  if (tokens->empty()) {
    return Usage(ctx, InvalidArgument("serve: --token-file '" + path + "' has no token"));
  }
  return Status();
}

Status RunServe(Context& ctx, const ServeFlags& flags) {
  server::ServerOptions options;
  FERRY_RETURN_IF_ERROR(ParseListen(ctx, flags.listen, &options));
  if (flags.threads < 1 || flags.threads > 256) {
    return Usage(ctx, InvalidArgument("serve: --threads must be between 1 and 256"));
  }
  options.io_threads = flags.threads;
  options.allow_remote = flags.allow_remote;
  if (!flags.token_file.empty()) {
    FERRY_RETURN_IF_ERROR(ReadTokens(ctx, flags.token_file, &options.tokens));
  }
  FERRY_ASSIGN_OR_RETURN(auto data, OpenUrl(ctx, flags.data));
  (void)data;  // the proxy and tracker routes will use it

  server::Router router;
  // Later: for (const RouteRegistrar& add : {AddHfRoutes(deps), ...}) RETURN_IF_ERROR(add(router));
  server::Server server(options, router);
  Status started = server.Start();
  if (started.code() == StatusCode::kInvalidArgument) return Usage(ctx, started);
  FERRY_RETURN_IF_ERROR(started);
  StopOnSignals();
  std::fprintf(stderr, "ferry serve: listening on %s (data %s)\n", server.url().c_str(),
               storage::RedactUrl(flags.data).c_str());
  std::fflush(stderr);
  while (!ctx.interrupted->load()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::fprintf(stderr, "ferry serve: stopping\n");
  server.Shutdown(kShutdownGrace);
  return Status();
}

}  // namespace

void AddServeCommand(CLI::App& app, Action& action) {
  auto flags = std::make_shared<ServeFlags>();
  auto* cmd = app.add_subcommand("serve", "Serve HTTP: a caching proxy (Hugging Face, PyPI)");
  cmd->add_option("--data", flags->data, "Where the server keeps its data (a directory or URL)")
      ->required();
  cmd->add_option("--listen", flags->listen, "HOST:PORT to listen on (port 0: any free port)")
      ->capture_default_str();
  cmd->add_option("--token-file", flags->token_file,
                  "File of bearer tokens clients must send, one per line");
  cmd->add_option("--threads", flags->threads, "I/O threads")->capture_default_str();
  cmd->add_flag("--allow-remote", flags->allow_remote,
                "Allow listening on an address other hosts can reach");
  cmd->callback(
      [flags, &action] { action = [flags](Context& ctx) { return RunServe(ctx, *flags); }; });
}

}  // namespace ferry::cli
