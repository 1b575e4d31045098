// ferry serve --data URL: the caching proxy for the Hugging Face Hub (/hf) and PyPI (/pypi)
// over one verified blob cache in the data store (docs/semantics/serve.md, cache.md, hf.md,
// pypi.md), and the MLflow tracking API (/api/2.0/mlflow/, mlflow.md). Each module adds its
// routes through a RouteRegistrar (server/router.h).

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "base/strings.h"
#include "cli/command.h"
#include "cli/serve_tracker.h"
#include "proxy/hf/hf_service.h"
#include "proxy/pypi_routes/pypi_routes.h"
#include "proxy/service/proxy_context.h"
#include "proxy/upstream/upstream_client.h"
#include "server/server.h"
#include "storage/url.h"
#include "tracker/artifacts/artifact_routes.h"
#include "ui/ui_routes.h"

namespace ferry::cli {

namespace {

// The port `ferry serve` listens on by default (loopback only).
constexpr uint16_t kDefaultPort = 8780;
// How long in-flight responses may run on after SIGINT/SIGTERM.
constexpr auto kShutdownGrace = std::chrono::seconds(10);
// After that, how long the server may take to close what is left before the process exits
// anyway (a handler that never returns must not keep ferry serve alive: every write the server
// makes is atomic on disk, so ending it is what kill -9 does, which is tested).
constexpr auto kShutdownHardStop = std::chrono::seconds(10);

struct ServeFlags {
  std::string data;
  std::string listen = "127.0.0.1:" + std::to_string(kDefaultPort);
  std::string token_file;
  std::string read_token_file;
  int threads = 2;
  bool allow_remote = false;
  bool allow_anonymous = false;
  std::string hf_upstream = "https://huggingface.co";
  std::vector<std::string> pypi_upstreams;  // "URL" or "NAME=URL" (proxy/pypi_routes/pypi_index.h)
  std::vector<proxy::PypiIndex> pypi_indexes;  // read from pypi_upstreams
  bool offline = false;
  std::string max_cache_size;    // "" = no cap
  uint64_t max_cache_bytes = 0;  // max_cache_size parsed (CheckProxyFlags)
  int metadata_ttl = 600;        // seconds
  std::string spool_dir;
  int stall_timeout = 30;                   // seconds
  std::vector<std::string> anonymous_read;  // areas: hf, pypi
  std::vector<std::string> allowed_hosts;
  std::vector<std::string> upstream_allow;
  std::string hf_token_file;
  TrackerFlags tracker;
};

// Where in the data store the proxy keeps its blobs and documents.
constexpr const char* kCachePrefix = "cache/";

// The cache's flags, checked before anything is created (a refused start leaves no --data).
Status CheckProxyFlags(Context& ctx, ServeFlags& flags) {
  FERRY_RETURN_IF_ERROR(
      ParseSize(ctx, flags.max_cache_size, "--max-cache-size", &flags.max_cache_bytes));
  if (flags.stall_timeout < 1 || flags.stall_timeout > 3600) {
    return Usage(ctx, InvalidArgument("serve: --stall-timeout must be 1 to 3600 seconds"));
  }
  if (flags.metadata_ttl < 0) {
    return Usage(ctx, InvalidArgument("serve: --metadata-ttl must be 0 or more seconds"));
  }
  for (const std::string& h : flags.upstream_allow) {
    if (h.empty() || h.find('/') != std::string::npos) {
      return Usage(ctx,
                   InvalidArgument("serve: --upstream-allow '" + h + "' is not HOST or HOST:PORT"));
    }
  }
  return Status();
}

// The proxy's shared parts over the data store (flags checked by CheckProxyFlags).
Result<std::shared_ptr<proxy::ProxyContext>> OpenProxy(const ServeFlags& flags,
                                                       const storage::OpenedUrl& data) {
  auto px = std::make_shared<proxy::ProxyContext>();
  std::string prefix = data.key;
  if (!prefix.empty() && prefix.back() != '/') prefix += '/';
  prefix += kCachePrefix;
  proxy::BlobCacheOptions co;
  co.prefix = prefix;
  co.max_bytes = flags.max_cache_bytes;
  co.fetch.spool_dir = flags.spool_dir;
  co.fetch.stall_timeout = std::chrono::seconds(flags.stall_timeout);
  // Blobs being fetched are spooled on local disk; beside a local cache by default, since the
  // temporary directory may be a small tmpfs and models are tens of GB.
  if (co.fetch.spool_dir.empty() && data.url.scheme == storage::Scheme::kLocal) {
    co.fetch.spool_dir = "/" + prefix + "spool";
    std::error_code ec;
    std::filesystem::create_directories(co.fetch.spool_dir, ec);
    if (ec) {
      return Status(StatusCode::kPermissionDenied, "serve: cannot create spool directory '" +
                                                       co.fetch.spool_dir + "': " + ec.message());
    }
  }
  FERRY_ASSIGN_OR_RETURN(auto cache, proxy::BlobCache::Create(data.store, co));
  px->cache = std::move(cache);
  px->docs = std::make_shared<proxy::DocCache>(data.store, prefix);
  proxy::UpstreamOptions uo;
  uo.client.cancel = nullptr;  // a cache fill outlives the request that started it
  uo.client.low_speed_time = std::chrono::seconds(flags.stall_timeout);
  // Where upstream answers may send the proxy (no SSRF: proxy/upstream/destinations.h): the
  // operator's upstreams and --upstream-allow anywhere; the public services' file hosts at public
  // addresses only; nothing else.
  proxy::DestinationPolicy dp;
  dp.trusted = {proxy::OriginOf(flags.hf_upstream)};
  for (const proxy::PypiIndex& index : flags.pypi_indexes) {
    dp.trusted.push_back(proxy::OriginOf(index.upstream));
  }
  for (const std::string& h : flags.upstream_allow) dp.trusted.push_back(h);
  std::vector<std::string> upstreams = {flags.hf_upstream};
  for (const proxy::PypiIndex& index : flags.pypi_indexes) upstreams.push_back(index.upstream);
  for (const std::string& up : upstreams) {
    for (std::string& host : proxy::DefaultPublicHostsFor(up)) dp.public_hosts.push_back(host);
  }
  uo.destinations = std::move(dp);
  px->upstream = std::make_shared<proxy::UpstreamClient>(uo);
  px->options.offline = flags.offline;
  px->options.metadata_ttl = std::chrono::seconds(flags.metadata_ttl);
  return px;
}

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

// One token per line; blank lines and lines starting with '#' are skipped. `flag` names the
// option in messages.
Status ReadTokens(Context& ctx, const std::string& flag, const std::string& path,
                  std::vector<std::string>* tokens) {
  std::ifstream in(path);
  if (!in) return Usage(ctx, InvalidArgument("serve: cannot read " + flag + " '" + path + "'"));
  std::string line;
  while (std::getline(in, line)) {
    std::string_view t = Trim(line);
    if (t.empty() || t[0] == '#') continue;
    tokens->emplace_back(t);
  }
  if (tokens->empty()) {
    return Usage(ctx, InvalidArgument("serve: " + flag + " '" + path + "' has no token"));
  }
  return Status();
}

// The areas of the server's paths (server/admission.h): /hf/ and /pypi/, each readable without
// a token when --anonymous-read names it; pip's area offers HTTP Basic in its 401s.
Status ParseAreas(Context& ctx, const ServeFlags& flags, server::ServerOptions* o) {
  server::Area hf{.prefix = "/hf/"}, pypi{.prefix = "/pypi/", .basic_challenge = true};
  for (const std::string& list : flags.anonymous_read) {
    for (std::string_view a : Split(list, ',')) {
      a = Trim(a);
      if (a == "hf") {
        hf.anonymous_read = true;
      } else if (a == "pypi") {
        pypi.anonymous_read = true;
      } else {
        return Usage(ctx, InvalidArgument("serve: --anonymous-read '" + std::string(a) +
                                          "' is not an area (hf, pypi)"));
      }
    }
  }
  if ((hf.anonymous_read || pypi.anonymous_read) && o->tokens.empty() && o->read_tokens.empty()) {
    return Usage(ctx, InvalidArgument("serve: --anonymous-read needs --token-file or "
                                      "--read-token-file (without tokens everything is open)"));
  }
  o->areas = {hf, pypi};
  for (const std::string& h : flags.allowed_hosts) {
    if (h.empty() || h.find_first_of("/:@ ") != std::string::npos) {
      return Usage(ctx, InvalidArgument("serve: --allowed-host '" + h +
                                        "' is not a host name (no port, no scheme)"));
    }
    o->allowed_hosts.push_back(h);
  }
  return Status();
}

// The server's own Hugging Face token (--hf-token-file): the file's first line that is not
// blank or a comment.
Result<std::string> ReadHfToken(Context& ctx, const std::string& path) {
  if (path.empty()) return std::string();
  std::vector<std::string> tokens;
  FERRY_RETURN_IF_ERROR(ReadTokens(ctx, "--hf-token-file", path, &tokens));
  return tokens.front();
}

// MLflow artifacts live in --data's tracker/artifacts/ (docs/semantics/mlflow-artifacts.md).
std::string ArtifactsRoot(const storage::OpenedUrl& data) {
  std::string root = data.key;
  if (!root.empty() && root.back() != '/') root += '/';
  return root + "tracker/artifacts";
}

Status RunServe(Context& ctx, ServeFlags flags) {
  if (flags.data.empty()) {
    return Usage(ctx, InvalidArgument("serve: --data is required (a directory or URL)"));
  }
  auto indexes = proxy::ParsePypiIndexes(flags.pypi_upstreams);
  if (!indexes.ok()) return Usage(ctx, indexes.status());
  flags.pypi_indexes = std::move(*indexes);
  server::ServerOptions options;
  FERRY_RETURN_IF_ERROR(ParseListen(ctx, flags.listen, &options));
  if (flags.threads < 1 || flags.threads > 256) {
    return Usage(ctx, InvalidArgument("serve: --threads must be between 1 and 256"));
  }
  options.io_threads = flags.threads;
  // Blob bodies go out 1 MiB per pull: a quarter of the worker round trips of the 256 KiB
  // default (measured on the warm path), one window of the blob reader.
  options.stream_chunk = 1u << 20;
  options.allow_remote = flags.allow_remote;
  options.allow_anonymous = flags.allow_anonymous;
  if (!flags.token_file.empty()) {
    FERRY_RETURN_IF_ERROR(ReadTokens(ctx, "--token-file", flags.token_file, &options.tokens));
  }
  if (!flags.read_token_file.empty()) {
    FERRY_RETURN_IF_ERROR(
        ReadTokens(ctx, "--read-token-file", flags.read_token_file, &options.read_tokens));
    for (const std::string& t : options.read_tokens) {
      if (std::find(options.tokens.begin(), options.tokens.end(), t) != options.tokens.end()) {
        // Never the token itself (a secret): say which files.
        return Usage(ctx, InvalidArgument("serve: a token of --read-token-file '" +
                                          flags.read_token_file + "' is also in --token-file '" +
                                          flags.token_file + "' (a token is read-only or not)"));
      }
    }
  }
  FERRY_RETURN_IF_ERROR(ParseAreas(ctx, flags, &options));
  FERRY_ASSIGN_OR_RETURN(std::string hf_token, ReadHfToken(ctx, flags.hf_token_file));
  FERRY_RETURN_IF_ERROR(CheckProxyFlags(ctx, flags));
  // Every flag is checked before the first thing is created: a refused start changes nothing.
  if (Status listen = server::CheckListenPolicy(options); !listen.ok()) return Usage(ctx, listen);
  FERRY_ASSIGN_OR_RETURN(auto data, OpenUrl(ctx, flags.data));
  FERRY_ASSIGN_OR_RETURN(auto px, OpenProxy(flags, data));
  // Where the server keeps things on its disk is nobody's business on the LAN.
  for (std::string p : {flags.data, flags.spool_dir, flags.tracker.db}) {
    if (p.empty() || p.find("://") != std::string::npos) continue;
    std::error_code ec;
    std::string abs = std::filesystem::absolute(p, ec).lexically_normal().string();
    while (abs.size() > 1 && abs.back() == '/') abs.pop_back();
    if (!ec && abs.size() > 1) {
      options.private_paths.push_back(abs);
      options.private_paths.push_back(abs.substr(1));  // a local store's key: no leading '/'
    }
  }
  options.metrics = std::make_shared<server::MetricsRegistry>();
  proxy::AddCacheMetrics(*options.metrics, px->cache);

  FERRY_ASSIGN_OR_RETURN(Tracker tracker,
                         OpenTracker(ctx, flags.tracker, data, ArtifactsRoot(data)));

  server::Router router;
  // The registrars own their modules' state; `modules` lives until the server has stopped.
  std::vector<server::RouteRegistrar> modules = {
      proxy::hf::HfRoutes(
          std::make_shared<proxy::hf::HfService>(*px, flags.hf_upstream, std::move(hf_token))),
      std::move(tracker.routes),
      tracker::artifacts::ArtifactRoutes(data.store, ArtifactsRoot(data), tracker.uploads),
      ui::UiRoutes(),
  };
  for (const proxy::PypiIndex& index : flags.pypi_indexes) {
    modules.push_back(proxy::PypiRoutes(*px, index, options.metrics.get()));
  }
  for (const auto& add : modules) {
    if (add) FERRY_RETURN_IF_ERROR(add(router));
  }
  server::Server server(options, router);
  Status started = server.Start();
  if (started.code() == StatusCode::kInvalidArgument) return Usage(ctx, started);
  FERRY_RETURN_IF_ERROR(started);
  StopOnSignals();
  std::fprintf(stderr, "ferry serve: listening on %s (data %s)\n", server.url().c_str(),
               storage::RedactUrl(flags.data).c_str());
  if (!tracker.note.empty()) std::fprintf(stderr, "ferry serve: %s\n", tracker.note.c_str());
  std::fflush(stderr);
  while (!ctx.interrupted->load()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::fprintf(stderr, "ferry serve: stopping\n");
  std::thread([] {
    std::this_thread::sleep_for(kShutdownGrace + kShutdownHardStop);
    std::fprintf(stderr,
                 "ferry serve: requests still running %lld s after the stop signal; "
                 "exiting without them\n",
                 static_cast<long long>((kShutdownGrace + kShutdownHardStop).count()));
    std::fflush(stderr);
    std::_Exit(0);
  }).detach();
  server.Shutdown(kShutdownGrace);
  px->cache->SaveAccessTimes().IgnoreError();
  return Status();
}

}  // namespace

void AddServeCommand(CLI::App& app, Action& action) {
  auto flags = std::make_shared<ServeFlags>();
  auto* cmd = app.add_subcommand(
      "serve", "Serve HTTP: a caching proxy (Hugging Face, PyPI) and an MLflow tracking server");
  cmd->add_option("--data", flags->data, "Where the server keeps its data (a directory or URL)");
  cmd->add_option("--listen", flags->listen, "HOST:PORT to listen on (port 0: any free port)")
      ->capture_default_str();
  cmd->add_option("--token-file", flags->token_file,
                  "File of bearer tokens clients must send, one per line (read and write)");
  cmd->add_option("--read-token-file", flags->read_token_file,
                  "File of read-only bearer tokens, one per line (GET/HEAD and searches)");
  cmd->add_option("--threads", flags->threads, "I/O threads")->capture_default_str();
  cmd->add_flag("--allow-remote", flags->allow_remote,
                "Allow listening on an address other hosts can reach");
  cmd->add_flag("--allow-anonymous", flags->allow_anonymous,
                "With --allow-remote: serve without tokens (anyone who reaches it may write)");
  cmd->add_option("--anonymous-read", flags->anonymous_read,
                  "Areas readable without a token on a server with tokens: hf, pypi (e.g. "
                  "hf,pypi: the caches open to the LAN, the tracker behind tokens)");
  cmd->add_option("--allowed-host", flags->allowed_hosts,
                  "A host name clients use to reach the server without a token, besides its "
                  "addresses, localhost and this machine's name (repeatable)");
  cmd->add_option("--hf-token-file", flags->hf_token_file,
                  "File with the server's own Hugging Face token, sent upstream for clients "
                  "that send none (gated repos)");
  cmd->add_option("--upstream-allow", flags->upstream_allow,
                  "HOST[:PORT] that upstream answers (redirects, file links) may send the proxy "
                  "to, besides the upstreams themselves (repeatable)");
  cmd->add_option("--hf-upstream", flags->hf_upstream, "The Hugging Face Hub to cache (/hf)")
      ->capture_default_str();
  cmd->add_option("--pypi-upstream", flags->pypi_upstreams,
                  "A simple index to cache: URL (at /pypi/simple/; default " +
                      std::string(proxy::kDefaultPypiUpstream) +
                      ") or NAME=URL (at /pypi/NAME/simple/, e.g. "
                      "torch-cu124=https://download.pytorch.org/whl/cu124); repeatable");
  cmd->add_flag("--offline", flags->offline,
                "Serve only what is cached; never contact upstream (uncached: 504)");
  cmd->add_option("--max-cache-size", flags->max_cache_size,
                  "Evict least recently used blobs above this size (e.g. 500G; default: no cap)");
  cmd->add_option("--metadata-ttl", flags->metadata_ttl,
                  "Seconds a branch's commit, a listing or an index page is reused")
      ->capture_default_str();
  cmd->add_option("--stall-timeout", flags->stall_timeout,
                  "Seconds without upstream progress before a fetch fails (then retried)")
      ->capture_default_str();
  cmd->add_option("--spool-dir", flags->spool_dir,
                  "Local directory for blobs being fetched (default: the temporary directory)");
  cmd->add_option("--tracker-db", flags->tracker.db,
                  "The MLflow tracker's SQLite file or postgresql://user@host:port/db (default: "
                  "<--data dir>/tracker/tracker.db)");
  cmd->add_option("--default-artifact-root", flags->tracker.artifact_root,
                  "Where new MLflow experiments keep their artifacts")
      ->capture_default_str();
  CLI::App* prewarm = AddPrewarmCommand(*cmd, action);
  cmd->callback([cmd, prewarm, flags, &action] {
    if (cmd->got_subcommand(prewarm)) return;  // `ferry serve prewarm` set its own action
    action = [flags](Context& ctx) { return RunServe(ctx, *flags); };
  });
}

}  // namespace ferry::cli
