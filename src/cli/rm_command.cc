// ferry rm URL... [-r]
//
// Without -r each URL must name an existing object (a missing one is an error). With -r the URL
// is a prefix and everything under "prefix/" is deleted (batched where the backend can). A whole
// bucket or filesystem root is never deleted.

#include <fmt/format.h>

#include "cli/command.h"

namespace ferry::cli {

namespace {

struct RmOptions {
  std::vector<std::string> urls;
  bool recursive = false;
  bool quiet = false;
};

Status RemoveTree(Context& ctx, const RmOptions& o, storage::OpenedUrl& opened,
                  const std::string& url) {
  std::string prefix = opened.key;
  if (prefix.empty()) {
    return Usage(ctx, InvalidArgument("refusing to delete everything in '" +
                                      storage::RedactUrl(url) + "'; name a prefix"));
  }
  if (prefix.back() != '/') prefix.push_back('/');
  uint64_t deleted = 0;
  Status first_error;
  // Collect one page, delete it, continue from the last key. Deleting keys never reorders the
  // remaining ones, so the continuation stays valid.
  std::string continuation;
  while (true) {
    FERRY_ASSIGN_OR_RETURN(auto page,
                           opened.store->List({.prefix = prefix, .continuation = continuation}));
    std::vector<std::string> keys;
    for (const auto& obj : page.objects) keys.push_back(obj.key);
    auto results = opened.store->DeleteMany(keys);
    for (size_t i = 0; i < results.size(); ++i) {
      if (results[i].ok()) {
        ++deleted;
        if (!o.quiet)
          FERRY_RETURN_IF_ERROR(Print(ctx, "deleted " + opened.store->UrlFor(keys[i]) + "\n"));
      } else if (first_error.ok()) {
        first_error = results[i];
      }
    }
    if (page.next.empty()) break;
    continuation = page.next;
  }
  if (!first_error.ok()) return first_error;
  if (deleted == 0) {
    return NotFound("rm -r '" + storage::RedactUrl(url) + "': nothing under this prefix");
  }
  return Status();
}

Status RunRm(Context& ctx, const RmOptions& o) {
  for (const auto& url : o.urls) FERRY_RETURN_IF_ERROR(ParseUrlArg(ctx, url).status());
  for (const auto& url : o.urls) {
    FERRY_ASSIGN_OR_RETURN(auto opened, OpenUrl(ctx, url));
    if (o.recursive) {
      FERRY_RETURN_IF_ERROR(RemoveTree(ctx, o, opened, url));
      continue;
    }
    FERRY_RETURN_IF_ERROR(opened.store->Stat(opened.key).status());
    FERRY_RETURN_IF_ERROR(opened.store->Delete(opened.key));
    if (!o.quiet)
      FERRY_RETURN_IF_ERROR(Print(ctx, "deleted " + opened.store->UrlFor(opened.key) + "\n"));
  }
  return Status();
}

}  // namespace

void AddRmCommand(CLI::App& app, Action& action) {
  auto o = std::make_shared<RmOptions>();
  auto* cmd = app.add_subcommand("rm", "Delete objects (or, with -r, everything under a prefix)");
  cmd->add_option("urls", o->urls, "Paths or URLs")->required();
  cmd->add_flag("-r,--recursive", o->recursive, "Delete everything under each prefix");
  cmd->add_flag("-q,--quiet", o->quiet, "Print nothing on success");
  cmd->callback([o, &action] { action = [o](Context& ctx) { return RunRm(ctx, *o); }; });
}

}  // namespace ferry::cli
