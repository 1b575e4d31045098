#pragma once
// Shared pieces of the ferry subcommands: the context every command gets, and output helpers.
// Each subcommand lives in its own file and registers itself with Add*Command().

#include <CLI/CLI.hpp>

#include <atomic>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>

#include "backends/backends.h"
#include "base/environment.h"
#include "base/status.h"
#include "storage/registry.h"
#include "transfer/stall_watch.h"

namespace ferry::cli {

// Exit codes: documented in README and docs/semantics/urls.md.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

struct Context {
  std::shared_ptr<const Environment> env;
  backends::BackendOptions backend_options;
  storage::StoreRegistry* registry = nullptr;
  std::FILE* out = stdout;
  // Set by Usage(): the failing status came from checking the command line (exit 2), not from
  // doing the work (exit 1).
  bool usage_error = false;
  // Set by Print() when standard output was closed by its reader (ferry ls | head): the
  // command's kCancelled status then ends ferry quietly with exit 0.
  bool output_closed = false;
  // Set on SIGINT/SIGTERM once a command called StopOnSignals(); the stores' retries and
  // transfers watch it too (BackendOptions::retry.cancel).
  const std::atomic<bool>* interrupted = nullptr;
  // Bytes written by Print(): what WatchStore() sees as progress.
  std::atomic<uint64_t> printed{0};
};

// Makes SIGINT and SIGTERM set *Context::interrupted instead of ending the process: the command
// then stops its work within about a second and exits 130 (ferry cp).
void StopOnSignals();
const std::atomic<bool>& InterruptFlag();

// A parsed subcommand's action; returns the process exit code.
using Action = std::function<Status(Context&)>;

// Each Add*Command adds a subcommand to `app`; when it is chosen, its action is put in `action`.
void AddLsCommand(CLI::App& app, Action& action);
void AddStatCommand(CLI::App& app, Action& action);
void AddCatCommand(CLI::App& app, Action& action);
void AddRmCommand(CLI::App& app, Action& action);
void AddCpCommand(CLI::App& app, Action& action);
void AddMbCommand(CLI::App& app, Action& action);
void AddAuthCommand(CLI::App& app, Action& action);
void AddDoctorCommand(CLI::App& app, Action& action);
void AddSysmetricsCommand(CLI::App& app, Action& action);
void AddTrackCommand(CLI::App& app, Action& action);
void AddShardCommand(CLI::App& app, Action& action);
// `ferry serve`: the HTTP server (runs until SIGINT/SIGTERM).
void AddServeCommand(CLI::App& app, Action& action);
// `ferry serve prewarm`, a subcommand of serve; returns it.
CLI::App* AddPrewarmCommand(CLI::App& serve, Action& action);
// `ferry mount` exits with the FUSE session's status (*exit_code); also adds `ferry umount`.
void AddMountCommands(CLI::App& app, Action& action, int* exit_code);
// `ferry run` exits with its command's status, which it stores in *exit_code.
void AddRunCommand(CLI::App& app, Action& action, int* exit_code);

// Marks a non-OK `s` from checking the command line (a malformed URL, a bad flag value, a bad
// spec file) as a usage error, so ferry exits 2; any other failure exits 1. Returns `s`.
Status Usage(Context& ctx, Status s);

// Parses `url`; a malformed URL is a usage error.
Result<storage::ParsedUrl> ParseUrlArg(Context& ctx, std::string_view url);
// Parses `url` (a malformed URL is a usage error) and opens its store (failures there are
// runtime errors: credentials, endpoints).
Result<storage::OpenedUrl> OpenUrl(Context& ctx, std::string_view url);

// While the returned watch lives, a command of a few requests (ls, stat, cat, auth) whose store
// stops answering says so after 10 s without output, naming the store's endpoint and `what`
// ("ls 's3://b/p/'"), instead of staying silent until the requests time out (StallWatch).
std::unique_ptr<transfer::StallWatch> WatchStore(Context& ctx, const storage::OpenedUrl& opened,
                                                 std::string what);

// Writes to ctx.out; a closed pipe (ferry ls | head) sets ctx.output_closed and returns
// kCancelled, which ends the command quietly.
Status Print(Context& ctx, std::string_view text);

// True when `opened` names an existing directory (only stores of local files have directories).
bool LocalDirExists(const storage::OpenedUrl& opened);

// Parses a size flag ("16M", "1G", "100M/s"); "" leaves *out unchanged. Usage error if bad.
Status ParseSize(Context& ctx, const std::string& text, const char* flag, uint64_t* out);

}  // namespace ferry::cli
