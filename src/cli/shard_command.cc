// ferry shard pack | index | ls | verify | cat: tar-shard datasets. The work is in src/shard
// (pack.h, dataset_ops.h, scan.h); this file parses flags and renders.

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "base/mutex.h"
#include "base/strings.h"
#include "cli/command.h"
#include "cli/render.h"
#include "shard/dataset_ops.h"
#include "shard/pack.h"
#include "shard/reader.h"
#include "shard/scan.h"
#include "storage/url.h"

namespace ferry::cli {

namespace {

struct ShardCliOptions {
  std::string src, dst, url, name, output, target_size, split;
  std::vector<std::string> shards, include, exclude;
  uint64_t samples_per_shard = 0, seed = 0;
  int jobs = 4;
  bool shuffle = false, overwrite = false, json = false, dotfiles = false, quiet = false;
};

// Pack progress on stderr: one line rewritten in place (10 a second at most) on a terminal,
// else a line every 10 s (logs of batch jobs).
class PackProgressLine {
 public:
  explicit PackProgressLine(bool enabled) : enabled_(enabled), tty_(isatty(STDERR_FILENO) == 1) {}
  ~PackProgressLine() { Finish(); }

  void Update(const shard::PackProgress& p) {
    if (!enabled_) return;
    MutexLock lock(mu_);
    auto now = std::chrono::steady_clock::now();
    bool done = p.samples == p.total_samples && p.samples > 0;
    if (!done && now - last_ < (tty_ ? std::chrono::milliseconds(100) : std::chrono::seconds(10)))
      return;
    last_ = now;
    double s = std::chrono::duration<double>(now - start_).count();
    std::string line = fmt::format(
        "packing: {}/{} samples ({:.0f}%), {} of {}, {:.1f} s", p.samples, p.total_samples,
        p.total_samples ? 100.0 * static_cast<double>(p.samples) / p.total_samples : 100.0,
        HumanBytes(p.bytes), HumanBytes(p.total_bytes), s);
    std::fprintf(stderr, tty_ ? "\r\033[K%s" : "%s\n", line.c_str());
    std::fflush(stderr);
    drawn_ = tty_;
  }
  void Finish() {
    MutexLock lock(mu_);
    if (drawn_) std::fprintf(stderr, "\r\033[K");
    drawn_ = false;
  }

 private:
  const bool enabled_, tty_;
  Mutex mu_;
  bool drawn_ GUARDED_BY(mu_) = false;
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  // The first line comes after one interval (a short pack in a log shows only its last line).
  std::chrono::steady_clock::time_point last_ GUARDED_BY(mu_) = start_;
};

Status RunPack(Context& ctx, const ShardCliOptions& o) {
  shard::PackOptions po{
      .samples_per_shard = o.samples_per_shard,
      .shuffle = o.shuffle,
      .seed = o.seed,
      .jobs = o.jobs,
      .overwrite = o.overwrite,
      .filter = {.include = o.include, .exclude = o.exclude, .dotfiles = o.dotfiles}};
  FERRY_RETURN_IF_ERROR(ParseSize(ctx, o.target_size, "--target-size", &po.target_size));
  if (po.target_size == 0) return Usage(ctx, InvalidArgument("--target-size must be > 0"));
  if (!o.split.empty()) {
    auto split = shard::ParseSplit(o.split);
    if (!split.ok()) return Usage(ctx, split.status());
    po.split = std::move(*split);
  }
  FERRY_RETURN_IF_ERROR(ParseUrlArg(ctx, o.src).status());
  FERRY_RETURN_IF_ERROR(ParseUrlArg(ctx, o.dst).status());
  PackProgressLine progress(!o.quiet);
  po.on_progress = [&progress](const shard::PackProgress& p) { progress.Update(p); };
  auto packed = shard::PackShards(*ctx.registry, o.src, o.dst, po);
  progress.Finish();
  FERRY_ASSIGN_OR_RETURN(auto r, std::move(packed));
  // Too few shards for parallel readers: said at once, whatever the output format.
  std::vector<std::string> warnings;
  if (po.split.empty()) {
    if (auto w = shard::FewShardsWarning(r.index, "")) warnings.push_back(*w);
  } else {
    for (const auto& s : r.splits) {
      if (auto w = shard::FewShardsWarning(s.index, s.name)) warnings.push_back(*w);
    }
  }
  for (const auto& w : warnings) std::fprintf(stderr, "ferry shard pack: warning: %s\n", w.c_str());
  if (o.json) {
    Json j = PackSummaryJson(r);
    j["warnings"] = warnings;
    j["skipped_dotfiles"] = r.hidden;
    j["excluded"] = r.excluded;
    if (!po.split.empty()) {
      Json splits = Json::object();
      for (const auto& s : r.splits) {
        splits[s.name] = {{"index", s.index_url},
                          {"shards", s.index.shards.size()},
                          {"samples", s.index.samples()},
                          {"bytes", s.index.bytes()}};
      }
      j["splits"] = splits;
    }
    return PrintJson(ctx, j);
  }
  std::string out =
      fmt::format("packed {} files as {} samples into {} shard(s), {}, in {:.1f} s\n", r.files,
                  r.index.samples(), r.index.shards.size(), HumanBytes(r.index.bytes()), r.seconds);
  if (r.hidden) out += fmt::format("skipped {} dotfile(s) (--dotfiles packs them)\n", r.hidden);
  if (r.excluded) out += fmt::format("left out {} file(s) by --include/--exclude\n", r.excluded);
  if (po.split.empty()) {
    out += fmt::format("index: {}\n", r.index_url);
  } else {
    for (const auto& s : r.splits) {
      out += fmt::format("{}: {} samples in {} shard(s), index: {}\n", s.name, s.index.samples(),
                         s.index.shards.size(), s.index_url);
    }
  }
  return Print(ctx, out);
}

Status RunIndex(Context& ctx, const ShardCliOptions& o) {
  FERRY_RETURN_IF_ERROR(ParseUrlArg(ctx, o.output).status());
  for (const auto& a : o.shards) FERRY_RETURN_IF_ERROR(ParseUrlArg(ctx, a).status());
  FERRY_ASSIGN_OR_RETURN(auto written,
                         shard::IndexShards(*ctx.registry, o.shards, o.output, o.jobs));
  const auto& index = written.index;
  return Print(ctx, fmt::format("indexed {} shard(s), {} samples, {}: {}\n", index.shards.size(),
                                index.samples(), HumanBytes(index.bytes()), written.url));
}

// One shard's files as they are read; what was listed is printed even when the shard turns out
// to be broken further on.
Status ListShardEntries(Context& ctx, storage::OpenedUrl& opened, bool json) {
  std::string out;
  auto info =
      shard::ScanShard(*opened.store, opened.key, storage::KeyBaseName(opened.key),
                       [&](const shard::ScannedEntry& e) {
                         out += json ? JsonLine(ShardEntryJson(e))
                                     : fmt::format("{:>12} {:>12}  {}\n", e.offset, e.size, e.name);
                       });
  FERRY_RETURN_IF_ERROR(Print(ctx, out));
  if (!info.ok()) return info.status();
  if (json) return Status();
  return Print(ctx, fmt::format("{} samples, {}, crc32c {}\n", info->samples,
                                HumanBytes(info->size), info->crc32c));
}

// `ferry shard ls DIR/`: the dataset indexes directly in DIR, each with its size.
Status ListIndexes(Context& ctx, const ShardCliOptions& o) {
  FERRY_ASSIGN_OR_RETURN(auto dir, OpenUrl(ctx, o.url));
  std::string prefix = storage::DirectoryPrefix(dir.key);
  std::vector<std::string> keys;
  uint64_t tars = 0;
  FERRY_RETURN_IF_ERROR(dir.store->ListAll({.prefix = prefix, .recursive = false},
                                           [&](const storage::ListPage& page) {
                                             for (const auto& obj : page.objects) {
                                               if (EndsWith(obj.key, ".index.json"))
                                                 keys.push_back(obj.key);
                                               if (EndsWith(obj.key, ".tar")) ++tars;
                                             }
                                             return Status();
                                           }));
  std::sort(keys.begin(), keys.end());
  if (keys.empty()) {
    return NotFound(fmt::format("no dataset index (*.index.json) in '{}'{}",
                                storage::RedactUrl(o.url),
                                tars ? fmt::format(" ({} .tar shard(s): `ferry shard index` makes "
                                                   "one, ferry.data indexes them itself)",
                                                   tars)
                                     : ""));
  }
  std::string out;
  Json list = Json::array();
  for (const auto& key : keys) {
    std::string url = dir.store->UrlFor(key);
    auto opened = shard::OpenIndex(*ctx.registry, url);
    std::string name = storage::KeyBaseName(key);
    name.resize(name.size() - std::string_view(".index.json").size());
    if (!opened.ok()) {
      if (o.json)
        list.push_back({{"name", name}, {"index", url}, {"error", opened.status().message()}});
      out += fmt::format("{:>10} {:>9}  {}  (unreadable: {})\n", "-", "-", name,
                         opened.status().message());
      continue;
    }
    const auto& index = opened->index;
    if (o.json) {
      list.push_back({{"name", name},
                      {"index", url},
                      {"shards", index.shards.size()},
                      {"samples", index.samples()},
                      {"bytes", index.bytes()}});
    }
    out += fmt::format("{:>10} {:>9}  {}  ({} shard(s))\n", HumanBytes(index.bytes()),
                       index.samples(), name, index.shards.size());
  }
  if (o.json) {
    for (const auto& j : list) FERRY_RETURN_IF_ERROR(PrintJson(ctx, j));
    return Status();
  }
  out += fmt::format("{} dataset(s)\n", keys.size());
  return Print(ctx, out);
}

Status RunLs(Context& ctx, const ShardCliOptions& o) {
  FERRY_ASSIGN_OR_RETURN(auto parsed, ParseUrlArg(ctx, o.url));
  if (parsed.trailing_slash) return ListIndexes(ctx, o);
  if (EndsWith(parsed.key, ".tar")) {
    FERRY_ASSIGN_OR_RETURN(auto opened, OpenUrl(ctx, o.url));
    return ListShardEntries(ctx, opened, o.json);
  }
  FERRY_ASSIGN_OR_RETURN(auto opened, shard::OpenIndex(*ctx.registry, o.url));
  const auto& index = opened.index;
  if (o.json) return PrintJson(ctx, DatasetJson(storage::RedactUrl(opened.url), index));
  std::string out;
  for (const auto& s : index.shards) {
    out += fmt::format("{:>10} {:>9}  {}  {}\n", HumanBytes(s.size), s.samples, s.crc32c, s.name);
  }
  out += fmt::format("{} shard(s), {} samples, {}\n", index.shards.size(), index.samples(),
                     HumanBytes(index.bytes()));
  return Print(ctx, out);
}

Status RunVerify(Context& ctx, const ShardCliOptions& o) {
  FERRY_RETURN_IF_ERROR(ParseUrlArg(ctx, o.url).status());
  FERRY_ASSIGN_OR_RETURN(auto report, shard::VerifyDataset(*ctx.registry, o.url, o.jobs));
  if (o.json) {
    FERRY_RETURN_IF_ERROR(PrintJson(ctx, VerifyReportJson(report)));
    return report.status();
  }
  if (!report.problems.empty()) {
    std::string out;
    for (const auto& p : report.problems) out += "bad: " + p + "\n";
    FERRY_RETURN_IF_ERROR(Print(ctx, out));
    return report.status();
  }
  const auto& index = report.index;
  return Print(
      ctx, fmt::format("ok: {} shard(s), {} samples, {} verified against {}\n", index.shards.size(),
                       index.samples(), HumanBytes(index.bytes()), report.index_url));
}

Status RunCat(Context& ctx, const ShardCliOptions& o) {
  FERRY_ASSIGN_OR_RETURN(auto opened, OpenUrl(ctx, o.url));
  FERRY_ASSIGN_OR_RETURN(std::string data,
                         shard::ReadShardMember(*opened.store, opened.key, o.url, o.name));
  return Print(ctx, data);
}

}  // namespace

void AddShardCommand(CLI::App& app, Action& action) {
  auto o = std::make_shared<ShardCliOptions>();
  auto* cmd = app.add_subcommand(
      "shard", "Tar-shard datasets (WebDataset format): pack, index, ls, verify, cat");
  cmd->require_subcommand(1);
  auto set = [&action, o](Status (*fn)(Context&, const ShardCliOptions&)) {
    return [&action, o, fn] { action = [o, fn](Context& ctx) { return fn(ctx, *o); }; };
  };

  auto* pack = cmd->add_subcommand("pack",
                                   "Pack the files under SRC into tar shards "
                                   "DST_PREFIX-000000.tar, ... + DST_PREFIX.index.json");
  pack->add_option("src", o->src,
                   "Directory or prefix of sample files (d/0001.jpg + d/0001.cls = one sample)")
      ->required();
  pack->add_option("dst", o->dst, "Shard name prefix, e.g. s3://bucket/ds/train")->required();
  pack->add_option("--target-size", o->target_size, "Shard size to aim for (default 1G)");
  pack->add_option("--samples-per-shard", o->samples_per_shard, "Fixed samples per shard instead");
  pack->add_flag("--shuffle", o->shuffle, "Shuffle samples before packing");
  pack->add_option("--seed", o->seed, "Seed for --shuffle and --split (default 0)");
  pack->add_option("--jobs", o->jobs, "Shards written at once (default 4)");
  pack->add_flag("--overwrite", o->overwrite, "Replace an existing dataset at DST_PREFIX");
  pack->add_option("--include", o->include,
                   "Pack only files matching this glob (repeatable; a name glob like '*.jpg', or "
                   "a path glob with '/')");
  pack->add_option("--exclude", o->exclude, "Leave out files matching this glob (repeatable)");
  pack->add_flag("--dotfiles", o->dotfiles,
                 "Also pack files and directories whose names start with '.' (skipped and "
                 "counted by default: .DS_Store, ._x.jpg)");
  pack->add_option("--split", o->split,
                   "Deal samples into datasets by fraction, e.g. train=0.9,val=0.1 (seeded by "
                   "--seed): DST-train.index.json, DST-val.index.json");
  pack->add_flag("-q,--quiet", o->quiet, "No progress line on stderr");
  pack->add_flag("--json", o->json, "Print the summary as JSON");
  pack->callback(set(RunPack));

  auto* index = cmd->add_subcommand(
      "index", "Build an index for existing tar shards (e.g. made by webdataset)");
  index
      ->add_option("shards", o->shards,
                   "Shard URLs, or a prefix ending in / for every .tar under it")
      ->required();
  index->add_option("-o,--output", o->output, "Index URL (…/name.index.json), next to the shards")
      ->required();
  index->add_option("--jobs", o->jobs, "Shards scanned at once (default 4)");
  index->callback(set(RunIndex));

  auto* ls = cmd->add_subcommand(
      "ls",
      "List a dataset's shards (INDEX or prefix), one shard's files (X.tar), or the datasets in "
      "a directory (DIR/)");
  ls->add_option("url", o->url, "Index, dataset prefix, .tar shard, or DIR/")->required();
  ls->add_flag("--json", o->json, "JSON output");
  ls->callback(set(RunLs));

  auto* verify = cmd->add_subcommand("verify", "Read every shard and check it against the index");
  verify->add_option("url", o->url, "Index or dataset prefix")->required();
  verify->add_option("--jobs", o->jobs, "Shards read at once (default 4)");
  verify->add_flag("--json", o->json, "Print the result as JSON (also when shards are bad)");
  verify->callback(set(RunVerify));

  auto* cat = cmd->add_subcommand("cat", "Write one file of a shard to stdout");
  cat->add_option("shard", o->url, "Shard URL (.tar)")->required();
  cat->add_option("name", o->name, "File name inside the shard, e.g. d/0001.jpg")->required();
  cat->callback(set(RunCat));
}

}  // namespace ferry::cli
