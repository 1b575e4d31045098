// ferry cat URL [--range START-END | START-]: an object's bytes on standard output.
// The range is HTTP-style and inclusive: 0-99 is the first 100 bytes.

#include "base/strings.h"
#include "cli/command.h"

namespace ferry::cli {

namespace {

struct CatOptions {
  std::string url;
  std::string range;
};

Result<storage::ByteRange> ParseRange(const std::string& text) {
  size_t dash = text.find('-');
  auto bad = [&] {
    return InvalidArgument("--range '" + text + "' must be START-END or START- (bytes, inclusive)");
  };
  if (dash == std::string::npos) return bad();
  auto start = ParseUint64(std::string_view(text).substr(0, dash));
  if (!start) return bad();
  std::string_view end_text = std::string_view(text).substr(dash + 1);
  if (end_text.empty()) return storage::ByteRange{*start, std::nullopt};
  auto end = ParseUint64(end_text);
  if (!end || *end < *start) return bad();
  return storage::ByteRange{*start, *end - *start + 1};
}

Status RunCat(Context& ctx, const CatOptions& o) {
  storage::ReadOptions ro;
  if (!o.range.empty()) {
    auto range = ParseRange(o.range);
    if (!range.ok()) return Usage(ctx, range.status());
    ro.range = *range;
  }
  FERRY_ASSIGN_OR_RETURN(auto opened, OpenUrl(ctx, o.url));
  auto watch = WatchStore(ctx, opened, "cat '" + opened.store->UrlFor(opened.key) + "'");
  return opened.store->Read(opened.key, ro,
                            [&](std::string_view chunk) { return Print(ctx, chunk); });
}

}  // namespace

void AddCatCommand(CLI::App& app, Action& action) {
  auto o = std::make_shared<CatOptions>();
  auto* cmd = app.add_subcommand("cat", "Write an object (or a byte range of it) to stdout");
  cmd->add_option("url", o->url, "Path or URL of one object")->required();
  cmd->add_option("--range", o->range, "Bytes START-END (inclusive) or START-");
  cmd->callback([o, &action] { action = [o](Context& ctx) { return RunCat(ctx, *o); }; });
}

}  // namespace ferry::cli
