// ferry track sync DIR [--url URL]: uploads what the Python client ferry.track spooled (an
// offline run, or one whose server was unreachable at its end); tracker/client/spool_sync.h.

#include <filesystem>

#include "cli/command.h"
#include "cli/render.h"
#include "tracker/client/spool_sync.h"

namespace ferry::cli {

namespace {

struct TrackSyncOptions {
  std::string dir;
  std::string url;
};

Status RunTrackSync(Context& ctx, const TrackSyncOptions& o) {
  const Environment& env = *ctx.env;
  std::string url = o.url;
  if (url.empty()) url = env.GetOr("MLFLOW_TRACKING_URI", env.GetOr("FERRY_TRACK_URL", ""));
  if (url.empty()) {
    return Usage(ctx, InvalidArgument("track sync: no tracking server; give --url or set "
                                      "MLFLOW_TRACKING_URI to the `ferry serve` URL"));
  }
  FERRY_ASSIGN_OR_RETURN(auto dirs, tracker::client::SpoolRunDirs(o.dir));
  tracker::client::ClientOptions options;
  options.url = url;
  options.token = env.GetOr("MLFLOW_TRACKING_TOKEN", env.GetOr("FERRY_TRACK_TOKEN", ""));
  auto client = tracker::client::MlflowClient::Create(options);
  if (!client.ok()) return Usage(ctx, client.status().WithContext("track sync"));
  tracker::client::SpoolSyncOptions sync;
  sync.note = [](const std::string& line) { std::fprintf(stderr, "ferry: %s\n", line.c_str()); };
  for (const auto& dir : dirs) {
    auto run_id = tracker::client::SyncSpool(**client, dir, sync);
    if (!run_id.ok()) {
      return run_id.status().WithContext("track sync '" + dir.string() +
                                         "' (the spool is kept; run the command again)");
    }
    FERRY_RETURN_IF_ERROR(Print(ctx, *run_id + "\n"));
  }
  return Status();
}

}  // namespace

void AddTrackCommand(CLI::App& app, Action& action) {
  auto* track = app.add_subcommand("track", "The experiment tracker's client side");
  track->require_subcommand(1);
  auto o = std::make_shared<TrackSyncOptions>();
  auto* sync = track->add_subcommand(
      "sync",
      "Upload runs that ferry.track spooled (offline=True, or a server unreachable at the "
      "end): creates offline runs, sends points and images, finishes them; prints run ids");
  sync->add_option("dir", o->dir,
                   "One run's spool directory, or a directory of them "
                   "(ferry.track's default: ~/.cache/ferry/track)")
      ->required();
  sync->add_option("--url", o->url,
                   "The tracking server (default MLFLOW_TRACKING_URI, then FERRY_TRACK_URL)");
  sync->callback([o, &action] { action = [o](Context& ctx) { return RunTrackSync(ctx, *o); }; });
}

}  // namespace ferry::cli
