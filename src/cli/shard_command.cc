// ferry shard pack | index | ls | verify | cat: tar-shard datasets. The work is in src/shard
// (pack.h, dataset_ops.h, scan.h); this file parses flags and renders.

#include <fmt/format.h>

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
  std::string src, dst, url, name, output, target_size;
  std::vector<std::string> shards;
  uint64_t samples_per_shard = 0, seed = 0;
  int jobs = 4;
  bool shuffle = false, overwrite = false, json = false;
};

Status RunPack(Context& ctx, const ShardCliOptions& o) {
  shard::PackOptions po{.samples_per_shard = o.samples_per_shard,
                        .shuffle = o.shuffle,
                        .seed = o.seed,
                        .jobs = o.jobs,
                        .overwrite = o.overwrite};
  FERRY_RETURN_IF_ERROR(ParseSize(ctx, o.target_size, "--target-size", &po.target_size));
  if (po.target_size == 0) return Usage(ctx, InvalidArgument("--target-size must be > 0"));
  FERRY_RETURN_IF_ERROR(ParseUrlArg(ctx, o.src).status());
  FERRY_RETURN_IF_ERROR(ParseUrlArg(ctx, o.dst).status());
  FERRY_ASSIGN_OR_RETURN(auto r, shard::PackShards(*ctx.registry, o.src, o.dst, po));
  if (o.json) return PrintJson(ctx, PackSummaryJson(r));
  return Print(ctx, fmt::format("packed {} files as {} samples into {} shard(s), {}, in {:.1f} s\n"
                                "index: {}\n",
                                r.files, r.index.samples(), r.index.shards.size(),
                                HumanBytes(r.index.bytes()), r.seconds, r.index_url));
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

Status RunLs(Context& ctx, const ShardCliOptions& o) {
  FERRY_ASSIGN_OR_RETURN(auto parsed, ParseUrlArg(ctx, o.url));
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
  pack->add_option("--seed", o->seed, "Seed for --shuffle (default 0)");
  pack->add_option("--jobs", o->jobs, "Shards written at once (default 4)");
  pack->add_flag("--overwrite", o->overwrite, "Replace an existing dataset at DST_PREFIX");
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
      "ls", "List a dataset's shards (INDEX or prefix), or one shard's files (X.tar)");
  ls->add_option("url", o->url, "Index, dataset prefix or .tar shard")->required();
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
