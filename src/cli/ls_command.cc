// ferry ls URL [-r] [-l] [--json]
//
// An object URL prints that object. Otherwise the URL is a directory/prefix: "s3://b/dir" and
// "s3://b/dir/" both list what is under "dir/". Names are printed relative to the listed
// prefix, directories with a trailing '/'. --json prints one JSON object per line.

#include <fmt/format.h>

#include "base/log.h"
#include "base/strings.h"
#include "cli/command.h"
#include "cli/render.h"

namespace ferry::cli {

namespace {

struct LsOptions {
  std::string url;
  bool recursive = false;
  bool long_format = false;
  bool json = false;
};

std::string FormatTime(const std::optional<SystemTime>& t) {
  return t ? FormatIso8601(*t) : std::string("-");
}

Status PrintObject(Context& ctx, const LsOptions& o, const storage::Store& store,
                   const storage::ObjectInfo& info, std::string_view name) {
  if (o.json) return PrintJson(ctx, ListedObjectJson(store, info));
  if (o.long_format) {
    return Print(ctx, fmt::format("{:>14}  {}  {}\n", info.size, FormatTime(info.modified), name));
  }
  return Print(ctx, std::string(name) + "\n");
}

Status RunLs(Context& ctx, const LsOptions& o) {
  FERRY_ASSIGN_OR_RETURN(auto opened, OpenUrl(ctx, o.url));
  auto watch = WatchStore(ctx, opened, "ls '" + opened.store->UrlFor(opened.key) + "'");
  auto& store = *opened.store;
  std::string key = opened.key;
  if (!key.empty() && key.back() != '/') {
    auto info = store.Stat(key);
    if (info.ok()) return PrintObject(ctx, o, store, *info, storage::KeyBaseName(key));
    if (info.status().code() != StatusCode::kNotFound) return info.status();
    key.push_back('/');
  }
  bool any = false;
  Status s = store.ListAll(
      {.prefix = key, .recursive = o.recursive}, [&](const storage::ListPage& page) -> Status {
        for (const auto& e : page.skipped) {
          Log(storage::SkipIsWarning(e.kind) ? LogLevel::kWarn : LogLevel::kInfo, "not listed: {}",
              storage::DescribeSkipped(store, e));
        }
        // Merge the two sorted lists so output is in name order.
        size_t i = 0, j = 0;
        while (i < page.objects.size() || j < page.prefixes.size()) {
          any = true;
          bool take_prefix = j < page.prefixes.size() &&
                             (i == page.objects.size() || page.prefixes[j] < page.objects[i].key);
          if (take_prefix) {
            const std::string& p = page.prefixes[j++];
            std::string name = p.substr(key.size());
            if (o.json) {
              FERRY_RETURN_IF_ERROR(PrintJson(ctx, ListedPrefixJson(store, p)));
            } else if (o.long_format) {
              FERRY_RETURN_IF_ERROR(
                  Print(ctx, fmt::format("{:>14}  {:<20}  {}\n", "DIR", "", name)));
            } else {
              FERRY_RETURN_IF_ERROR(Print(ctx, name + "\n"));
            }
          } else {
            const auto& obj = page.objects[i++];
            FERRY_RETURN_IF_ERROR(PrintObject(ctx, o, store, obj, obj.key.substr(key.size())));
          }
        }
        return Status();
      });
  FERRY_RETURN_IF_ERROR(s);
  if (!any) {
    // An existing empty directory is fine; a name that matches nothing is not.
    auto probe = store.List({.prefix = key, .recursive = false, .max_keys = 1});
    if (probe.ok() && probe->objects.empty() && probe->prefixes.empty() && !key.empty() &&
        !LocalDirExists(opened)) {
      return NotFound("ls '" + o.url + "': no such object or prefix");
    }
  }
  return Status();
}

}  // namespace

void AddLsCommand(CLI::App& app, Action& action) {
  auto o = std::make_shared<LsOptions>();
  auto* cmd = app.add_subcommand("ls", "List objects and directories under a URL or path");
  cmd->add_option("url", o->url, "Path, s3://bucket/prefix, ...")->required();
  cmd->add_flag("-r,--recursive", o->recursive, "List every object below, not one level");
  cmd->add_flag("-l,--long", o->long_format, "Show size and modification time");
  cmd->add_flag("--json", o->json, "One JSON object per line");
  cmd->callback([o, &action] { action = [o](Context& ctx) { return RunLs(ctx, *o); }; });
}

}  // namespace ferry::cli
