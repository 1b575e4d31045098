// ferry cp [-r] SRC DST: copies objects between any two stores with the copy engine
// (src/transfer). Semantics in docs/semantics/copy.md.

#include <fmt/format.h>

#include <atomic>

#include "base/log.h"
#include "base/strings.h"
#include "cli/command.h"
#include "cli/render.h"
#include "transfer/copy_engine.h"

namespace ferry::cli {

namespace {

struct CpOptions {
  std::string src, dst;
  transfer::CopyOptions copy;
  std::string part_size, max_memory, bwlimit;
  bool json = false;
  bool no_progress = false;
  bool progress_lines = false;
  bool no_skip = false;
};

std::string SummaryLine(const transfer::CopyReport& r) {
  double rate = r.seconds > 0 ? static_cast<double>(r.bytes_copied) / r.seconds : 0;
  std::string s = fmt::format("ferry: copied {} of {} files ({}) in {:.1f} s, {}/s", r.files_copied,
                              r.files_total, HumanBytes(r.bytes_copied), r.seconds,
                              HumanBytes(static_cast<uint64_t>(rate)));
  if (r.files_skipped) {
    s += fmt::format("; {} unchanged skipped ({})", r.files_skipped, HumanBytes(r.bytes_skipped));
  }
  if (r.bytes_resumed) s += fmt::format("; resume saved {}", HumanBytes(r.bytes_resumed));
  if (r.retries) s += fmt::format("; {} retries", r.retries);
  if (r.files_failed) s += fmt::format("; {} failed", r.files_failed);
  if (r.left_out_count) s += fmt::format("; {} left out (links, special files)", r.left_out_count);
  return s + "\n";
}

Status RunCp(Context& ctx, CpOptions& o) {
  // First: a stop asked for while flags and URLs are checked is honoured too.
  StopOnSignals();
  FERRY_RETURN_IF_ERROR(ParseSize(ctx, o.part_size, "--part-size", &o.copy.part_size));
  FERRY_RETURN_IF_ERROR(ParseSize(ctx, o.max_memory, "--max-memory", &o.copy.max_memory));
  FERRY_RETURN_IF_ERROR(ParseSize(ctx, o.bwlimit, "--bwlimit", &o.copy.bwlimit));
  if (o.copy.transfers < 1 || o.copy.part_concurrency < 0) {
    return Usage(
        ctx, InvalidArgument("--transfers must be at least 1 and --part-concurrency at least 0"));
  }
  FERRY_RETURN_IF_ERROR(ParseUrlArg(ctx, o.src).status());
  FERRY_RETURN_IF_ERROR(ParseUrlArg(ctx, o.dst).status());
  FERRY_ASSIGN_OR_RETURN(auto src, OpenUrl(ctx, o.src));
  FERRY_ASSIGN_OR_RETURN(auto dst, OpenUrl(ctx, o.dst));
  o.copy.cancel = ctx.interrupted;
  o.copy.skip_unchanged = !o.no_skip;

  transfer::ProgressCounters counters;
  auto mode = o.no_progress      ? transfer::ProgressMode::kNone
              : o.progress_lines ? transfer::ProgressMode::kLines
                                 : transfer::ProgressMode::kAuto;
  transfer::CopyResult result;
  {
    transfer::ProgressReporter reporter(counters, mode);
    result = transfer::RunCopy(src, dst, o.copy, counters);
  }
  const auto& r = result.report;
  if (o.json) {
    FERRY_RETURN_IF_ERROR(PrintJson(ctx, CopySummaryJson(r, result.status)));
  } else if (o.copy.recursive || LogEnabled(LogLevel::kInfo)) {
    // Trees get a summary; a single object copy stays quiet unless -v.
    if (r.files_total > 0) std::fputs(SummaryLine(r).c_str(), stderr);
  }
  // After a stop at an error every object meets, the others in flight failed the same way.
  if (!result.stopped) {
    for (size_t i = 1; i < r.errors.size(); ++i) Log(LogLevel::kError, "{}", r.errors[i]);
  }
  if (ctx.interrupted->load()) {
    return Status(StatusCode::kCancelled, "cp interrupted; run the same command again to resume");
  }
  if (result.bad_request) return Usage(ctx, result.status);
  return result.status;
}

}  // namespace

void AddCpCommand(CLI::App& app, Action& action) {
  auto o = std::make_shared<CpOptions>();
  auto* cmd = app.add_subcommand("cp", "Copy objects or trees between paths and URLs");
  cmd->add_option("src", o->src, "Source path or URL")->required();
  cmd->add_option("dst", o->dst, "Destination path or URL (ending in / for a directory)")
      ->required();
  cmd->add_flag("-r,-R,--recursive", o->copy.recursive,
                "Copy everything under SRC into DST (-R: as in cp -R)");
  // One value per flag (repeat the flag), so positional arguments are never swallowed.
  cmd->add_option("--include", o->copy.include, "Only copy paths matching this glob (repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--exclude", o->copy.exclude, "Skip paths matching this glob (repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--transfers", o->copy.transfers, "Objects in flight (default 16)");
  cmd->add_option("--part-concurrency", o->copy.part_concurrency,
                  "Parts of large objects in flight (default: 16 uploading, 8 downloading)");
  cmd->add_option("--part-size", o->part_size, "Multipart part size (default 8M, auto-raised)");
  cmd->add_option("--max-memory", o->max_memory, "Cap on buffered data (default 512M)");
  cmd->add_option("--bwlimit", o->bwlimit, "Bandwidth cap, e.g. 100M (bytes per second)");
  cmd->add_flag("-L,--follow-links", o->copy.follow_symlinks,
                "Follow every symbolic link in a local source, also out of its tree (default: "
                "links out of the tree and links to directories are left out with a warning)");
  cmd->add_flag("--verify", o->copy.verify, "Re-read every written object and check its CRC32C");
  cmd->add_flag("--no-skip", o->no_skip, "Copy every object even when the destination has it");
  cmd->add_flag("--json", o->json, "Print a JSON summary on stdout");
  cmd->add_flag("--no-progress", o->no_progress, "No progress display");
  cmd->add_flag("--progress-lines", o->progress_lines, "Progress as a line every 10 s");
  cmd->add_option("--state-dir", o->copy.state_dir, "Where resume journals live");
  cmd->callback([o, &action] { action = [o](Context& ctx) { return RunCp(ctx, *o); }; });
}

}  // namespace ferry::cli
