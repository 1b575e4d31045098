// ferry stat URL [--json]: size, time, ETag and user metadata of one object.

#include <fmt/format.h>

#include "cli/command.h"
#include "cli/render.h"

namespace ferry::cli {

namespace {

struct StatOptions {
  std::string url;
  bool json = false;
};

Status RunStat(Context& ctx, const StatOptions& o) {
  FERRY_ASSIGN_OR_RETURN(auto opened, OpenUrl(ctx, o.url));
  auto watch = WatchStore(ctx, opened, "stat '" + opened.store->UrlFor(opened.key) + "'");
  auto stat = opened.store->Stat(opened.key);
  if (!stat.ok() && stat.status().code() == StatusCode::kNotFound && !opened.key.empty() &&
      opened.key.back() != '/') {
    // "s3://b/dir" names no object but objects sit under "dir/": say so (ls does the same).
    const std::string dir = opened.key + "/";
    auto page = opened.store->List({.prefix = dir, .recursive = false, .max_keys = 1});
    if (page.ok() && (!page->objects.empty() || !page->prefixes.empty())) {
      return NotFound("'" + opened.store->UrlFor(opened.key) +
                      "' is not an object but a prefix with objects under it; stat takes one "
                      "object: list them with 'ferry ls " +
                      opened.store->UrlFor(dir) + "'");
    }
  }
  FERRY_ASSIGN_OR_RETURN(auto info, std::move(stat));
  if (o.json) return PrintJson(ctx, StatJson(*opened.store, info));
  std::string modified = info.modified ? FormatIso8601(*info.modified) : "";
  std::string out = fmt::format("url:      {}\nsize:     {}\nmodified: {}\netag:     {}\n",
                                opened.store->UrlFor(info.key), info.size, modified, info.etag);
  for (const auto& [k, v] : info.metadata) out += fmt::format("meta:     {}={}\n", k, v);
  return Print(ctx, out);
}

}  // namespace

void AddStatCommand(CLI::App& app, Action& action) {
  auto o = std::make_shared<StatOptions>();
  auto* cmd = app.add_subcommand("stat", "Show an object's size, time, ETag and metadata");
  cmd->add_option("url", o->url, "Path or URL of one object")->required();
  cmd->add_flag("--json", o->json, "Print JSON");
  cmd->callback([o, &action] { action = [o](Context& ctx) { return RunStat(ctx, *o); }; });
}

}  // namespace ferry::cli
