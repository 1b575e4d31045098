// ferry auth s3://bucket[/prefix]: which credentials, endpoint, region and addressing Ferry
// would use for the URL, and (unless --no-check) whether a ListObjectsV2 call succeeds with them.
// Never prints a secret: the access key id is masked.

#include <fmt/format.h>

#include "cli/command.h"
#include "cli/render.h"
#include "storage/url.h"

namespace ferry::cli {

namespace {

struct AuthOptions {
  std::string url;
  bool no_check = false;
  bool json = false;
};

Status RunAuth(Context& ctx, const AuthOptions& o) {
  FERRY_ASSIGN_OR_RETURN(auto parsed, ParseUrlArg(ctx, o.url));
  if (parsed.scheme != storage::Scheme::kS3) {
    return Print(ctx,
                 "'" + storage::RedactUrl(o.url) + "' needs no credentials (not an s3:// URL)\n");
  }
  FERRY_ASSIGN_OR_RETURN(auto opened, OpenUrl(ctx, o.url));
  auto watch = WatchStore(ctx, opened, "auth '" + opened.store->UrlFor(parsed.key) + "'");
  storage::StoreDescription d = opened.store->Describe();
  if (!d.credentials) return d.credentials_error;
  if (o.json) {
    Json j = AuthJson(opened.store->UrlFor(parsed.key), d);
    if (!o.no_check) {
      auto page = opened.store->List({.prefix = parsed.key, .recursive = false, .max_keys = 1});
      if (!page.ok()) return page.status().WithContext("access check failed");
    }
    j["check"] = o.no_check ? "skipped" : "ok";
    return PrintJson(ctx, j);
  }
  FERRY_RETURN_IF_ERROR(
      Print(ctx, fmt::format("endpoint:    {}\nregion:      {}\naddressing:  {}\n"
                             "credentials: {}\n",
                             d.endpoint, d.region, d.addressing, d.credentials->summary)));
  if (o.no_check) return Status();
  auto page = opened.store->List({.prefix = parsed.key, .recursive = false, .max_keys = 1});
  if (!page.ok()) return page.status().WithContext("access check failed");
  return Print(
      ctx, "check:       ListObjectsV2 on " + opened.store->UrlFor(parsed.key) + " succeeded\n");
}

}  // namespace

void AddAuthCommand(CLI::App& app, Action& action) {
  auto o = std::make_shared<AuthOptions>();
  auto* cmd = app.add_subcommand("auth", "Show which credentials and endpoint an s3:// URL uses");
  cmd->add_option("url", o->url, "[PROFILE:]s3://bucket[/prefix]")->required();
  cmd->add_flag("--no-check", o->no_check, "Do not make a test request");
  cmd->add_flag("--json", o->json, "Print JSON (a failed check is an error, as without it)");
  cmd->callback([o, &action] { action = [o](Context& ctx) { return RunAuth(ctx, *o); }; });
}

}  // namespace ferry::cli
