// ferry shard pack | index | ls | verify | cat: tar-shard datasets (src/shard).

#include <fmt/format.h>

#include <atomic>
#include <mutex>
#include <nlohmann/json.hpp>

#include "base/strings.h"
#include "base/thread_pool.h"
#include "cli/command.h"
#include "shard/pack.h"
#include "shard/reader.h"
#include "shard/scan.h"
#include "shard/tar.h"
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
  if (o.json) {
    nlohmann::json j = {{"index", r.index_url},         {"shards", r.index.shards.size()},
                        {"samples", r.index.samples()}, {"files", r.files},
                        {"bytes", r.index.bytes()},     {"seconds", r.seconds}};
    return Print(ctx, j.dump() + "\n");
  }
  return Print(ctx, fmt::format("packed {} files as {} samples into {} shard(s), {}, in {:.1f} s\n"
                                "index: {}\n",
                                r.files, r.index.samples(), r.index.shards.size(),
                                HumanBytes(r.index.bytes()), r.seconds, r.index_url));
}

// Shards named on the command line, or every *.tar under a prefix ending in '/'.
Result<std::vector<std::string>> ShardKeys(storage::OpenedUrl& dir,
                                           const std::vector<std::string>& args,
                                           storage::StoreRegistry& registry) {
  std::vector<std::string> names;
  for (const auto& a : args) {
    FERRY_ASSIGN_OR_RETURN(auto opened, registry.Open(a));
    if (opened.store->UrlFor("") != dir.store->UrlFor("") || !StartsWith(opened.key, dir.key)) {
      return InvalidArgument("shard '" + storage::RedactUrl(a) +
                             "' is not under the index's directory '" + dir.store->UrlFor(dir.key) +
                             "'");
    }
    if (opened.url.trailing_slash || opened.key == dir.key) {
      FERRY_RETURN_IF_ERROR(opened.store->ListAll(
          {.prefix = storage::DirectoryPrefix(opened.key)}, [&](const storage::ListPage& p) {
            for (const auto& obj : p.objects) {
              if (EndsWith(obj.key, ".tar")) names.push_back(obj.key.substr(dir.key.size()));
            }
            return Status();
          }));
    } else {
      names.push_back(opened.key.substr(dir.key.size()));
    }
  }
  if (names.empty()) return NotFound("no .tar shards found");
  return names;
}

Status RunIndex(Context& ctx, const ShardCliOptions& o) {
  FERRY_RETURN_IF_ERROR(ParseUrlArg(ctx, o.output).status());
  for (const auto& a : o.shards) FERRY_RETURN_IF_ERROR(ParseUrlArg(ctx, a).status());
  FERRY_ASSIGN_OR_RETURN(auto at, ctx.registry->Open(shard::IndexUrlFor(o.output)));
  storage::OpenedUrl dir{.store = at.store, .key = shard::ShardDirKey(at.key), .url = at.url};
  FERRY_ASSIGN_OR_RETURN(auto names, ShardKeys(dir, o.shards, *ctx.registry));
  shard::DatasetIndex index;
  index.shards.resize(names.size());
  Status first;
  std::mutex mu;
  {
    ThreadPool pool(std::max(1, o.jobs));
    for (size_t i = 0; i < names.size(); ++i) {
      pool.Submit([&, i] {
        auto info = shard::ScanShard(*dir.store, dir.key + names[i], names[i]);
        std::lock_guard lock(mu);
        if (!info.ok()) {
          if (first.ok()) first = info.status();
          return;
        }
        index.shards[i] = std::move(*info);
      });
    }
  }
  FERRY_RETURN_IF_ERROR(first);
  FERRY_RETURN_IF_ERROR(at.store->WriteAll(at.key, shard::IndexToJson(index)).status());
  return Print(ctx,
               fmt::format("indexed {} shard(s), {} samples, {}: {}\n", index.shards.size(),
                           index.samples(), HumanBytes(index.bytes()), at.store->UrlFor(at.key)));
}

Status ListShardEntries(Context& ctx, storage::OpenedUrl& opened, bool json) {
  std::string out;
  auto info = shard::ScanShard(
      *opened.store, opened.key, storage::KeyBaseName(opened.key),
      [&](const shard::ScannedEntry& e) {
        out += json ? nlohmann::json({{"name", e.name}, {"size", e.size}, {"offset", e.offset}})
                              .dump() +
                          "\n"
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
  const std::string index_url = storage::RedactUrl(opened.url);
  if (o.json) {
    nlohmann::json shards = nlohmann::json::array();
    for (const auto& s : index.shards) {
      shards.push_back(
          {{"name", s.name}, {"size", s.size}, {"samples", s.samples}, {"crc32c", s.crc32c}});
    }
    return Print(ctx, nlohmann::json({{"index", index_url},
                                      {"samples", index.samples()},
                                      {"bytes", index.bytes()},
                                      {"shards", shards}})
                              .dump() +
                          "\n");
  }
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
  FERRY_ASSIGN_OR_RETURN(auto opened, shard::OpenIndex(*ctx.registry, o.url));
  const auto& index = opened.index;
  const std::string index_url = storage::RedactUrl(opened.url);
  std::vector<std::string> problems;
  std::mutex mu;
  {
    ThreadPool pool(std::max(1, o.jobs));
    for (const auto& s : index.shards) {
      pool.Submit([&, &s = s] {
        auto got = shard::ScanShard(*opened.at.store, opened.ShardKey(s), s.name);
        std::string problem;
        if (!got.ok()) {
          problem = got.status().message();
        } else if (got->size != s.size) {
          problem = fmt::format("{}: {} bytes, the index says {}", s.name, got->size, s.size);
        } else if (got->offsets != s.offsets) {
          problem = fmt::format("{}: {} samples (or their offsets) differ from the index's {}",
                                s.name, got->samples, s.samples);
        } else if (!s.sample_crcs.empty() && got->sample_crcs != s.sample_crcs) {
          size_t i = 0;
          while (got->sample_crcs[i] == s.sample_crcs[i]) ++i;
          problem = fmt::format(
              "{}: sample {} at offset {}: CRC32C of its data does not match "
              "the index",
              s.name, i, s.offsets[i]);
        } else if (!s.crc32c.empty() && got->crc32c != s.crc32c) {
          problem = fmt::format("{}: CRC32C {}, the index says {}", s.name, got->crc32c, s.crc32c);
        }
        if (!problem.empty()) {
          std::lock_guard lock(mu);
          problems.push_back(problem);
        }
      });
    }
  }
  if (!problems.empty()) {
    std::sort(problems.begin(), problems.end());
    std::string out;
    for (const auto& p : problems) out += "bad: " + p + "\n";
    FERRY_RETURN_IF_ERROR(Print(ctx, out));
    return Status(StatusCode::kDataLoss,
                  fmt::format("{} of {} shard(s) do not match '{}'", problems.size(),
                              index.shards.size(), index_url));
  }
  return Print(
      ctx, fmt::format("ok: {} shard(s), {} samples, {} verified against {}\n", index.shards.size(),
                       index.samples(), HumanBytes(index.bytes()), index_url));
}

Status RunCat(Context& ctx, const ShardCliOptions& o) {
  FERRY_ASSIGN_OR_RETURN(auto opened, OpenUrl(ctx, o.url));
  // Streams the shard until the named file is complete, then stops reading.
  bool found = false, done = false;
  std::string data;
  shard::TarParser parser({.on_entry =
                               [&](const shard::TarEntry& e) {
                                 found = e.name == o.name;
                                 return Status();
                               },
                           .on_data =
                               [&](std::string_view d) {
                                 if (found) data.append(d);
                                 return Status();
                               },
                           .on_end_of_entry = [&]() -> Status {
                             if (found) {
                               done = true;
                               return Status(StatusCode::kCancelled, "found");
                             }
                             return Status();
                           }});
  Status s = opened.store->Read(opened.key, {},
                                [&](std::string_view chunk) { return parser.Feed(chunk); });
  if (!done) {
    FERRY_RETURN_IF_ERROR(s.WithContext("shard '" + storage::RedactUrl(o.url) + "'"));
    FERRY_RETURN_IF_ERROR(parser.Finish().WithContext("shard '" + storage::RedactUrl(o.url) + "'"));
    return NotFound("no file '" + o.name + "' in shard '" + storage::RedactUrl(o.url) + "'");
  }
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
  verify->callback(set(RunVerify));

  auto* cat = cmd->add_subcommand("cat", "Write one file of a shard to stdout");
  cat->add_option("shard", o->url, "Shard URL (.tar)")->required();
  cat->add_option("name", o->name, "File name inside the shard, e.g. d/0001.jpg")->required();
  cat->callback(set(RunCat));
}

}  // namespace ferry::cli
