#include "shard/pack.h"

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <deque>
#include <future>
#include <map>
#include <random>

#include "base/crc32c.h"
#include "base/log.h"
#include "base/strings.h"
#include "base/thread_pool.h"
#include "shard/sample.h"
#include "shard/tar.h"

namespace ferry::shard {

namespace {

constexpr uint64_t kStreamAbove = 16ull << 20;  // larger files stream instead of read-ahead

struct SourceFile {
  std::string ext, key;  // key in the source store
  uint64_t size = 0;
};

struct PlannedSample {
  std::string key;
  std::vector<SourceFile> files;  // by extension
  uint64_t tar_bytes = 0;
};

Result<std::vector<PlannedSample>> ListSamples(storage::OpenedUrl& src, const FileFilter& filter,
                                               PackReport* report) {
  std::string prefix = storage::DirectoryPrefix(src.key);
  std::map<std::string, PlannedSample> by_key;
  std::vector<std::string> unkeyed;
  FERRY_RETURN_IF_ERROR(src.store->ListAll({.prefix = prefix}, [&](const storage::ListPage& page) {
    // Links out of the source tree and the like are never packed (the rule of ferry cp).
    for (const auto& e : page.skipped) {
      Log(storage::SkipIsWarning(e.kind) ? LogLevel::kWarn : LogLevel::kInfo, "not packing {}",
          storage::DescribeSkipped(*src.store, e));
    }
    for (const auto& o : page.objects) {
      std::string rel = o.key.substr(prefix.size());
      switch (filter.Check(rel)) {
        case FileFilter::Verdict::kHidden:
          ++report->hidden;
          continue;
        case FileFilter::Verdict::kExcluded:
          ++report->excluded;
          continue;
        case FileFilter::Verdict::kTake:
          break;
      }
      auto ke = SplitKey(rel);
      if (!ke) {
        unkeyed.push_back(rel);
        continue;
      }
      auto& s = by_key[ke->key];
      s.key = ke->key;
      s.files.push_back({ke->ext, o.key, o.size});
      ++report->files;
    }
    return Status();
  }));
  if (!unkeyed.empty()) {
    return InvalidArgument(std::to_string(unkeyed.size()) + " file(s) under '" +
                           src.store->UrlFor(prefix) +
                           "' have no sample key (no '.' in the name), e.g. '" + unkeyed.front() +
                           "'; rename them or move them out");
  }
  if (by_key.empty()) {
    std::string left_out;
    if (report->hidden || report->excluded) {
      left_out = fmt::format(
          " to pack ({} dotfile(s) and {} file(s) excluded by --include/"
          "--exclude left out)",
          report->hidden, report->excluded);
    }
    return NotFound("no files under '" + src.store->UrlFor(prefix) + "'" + left_out);
  }
  std::vector<PlannedSample> samples;
  samples.reserve(by_key.size());
  for (auto& [key, s] : by_key) {
    std::sort(s.files.begin(), s.files.end(),
              [](const SourceFile& a, const SourceFile& b) { return a.ext < b.ext; });
    for (const auto& f : s.files) s.tar_bytes += TarEntrySize(s.key + "." + f.ext, f.size);
    samples.push_back(std::move(s));
  }
  return samples;
}

// The same permutation on every platform (std::shuffle's algorithm is unspecified).
void Shuffle(std::vector<PlannedSample>& v, uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (size_t i = v.size(); i > 1; --i) {
    size_t j = static_cast<size_t>(rng() % i);
    std::swap(v[i - 1], v[j]);
  }
}

std::vector<std::vector<PlannedSample>> AssignShards(std::vector<PlannedSample> samples,
                                                     const PackOptions& o) {
  std::vector<std::vector<PlannedSample>> shards(1);
  uint64_t bytes = 0;
  for (auto& s : samples) {
    auto& cur = shards.back();
    bool full = o.samples_per_shard > 0
                    ? cur.size() >= o.samples_per_shard
                    : !cur.empty() && bytes + s.tar_bytes + 2 * kTarBlock > o.target_size;
    if (full) {
      shards.emplace_back();
      bytes = 0;
    }
    bytes += s.tar_bytes;
    shards.back().push_back(std::move(s));
  }
  return shards;
}

class ShardWriter {
 public:
  ShardWriter(storage::Store& src, ThreadPool& reads, int window, const std::atomic<bool>& failed,
              const std::function<void(uint64_t)>& on_sample)
      : src_(src), reads_(reads), window_(window), failed_(failed), on_sample_(on_sample) {}

  Result<ShardInfo> Write(storage::Store& dst, const std::string& key, const std::string& name,
                          const std::vector<PlannedSample>& samples) {
    FERRY_ASSIGN_OR_RETURN(auto writer, dst.NewWriter(key, {.content_type = "application/x-tar"}));
    ShardInfo info{.name = name, .samples = samples.size()};
    // Flattened file list with read-ahead futures for the small ones.
    struct Item {
      const PlannedSample* sample;
      const SourceFile* file;
      bool first_of_sample;
    };
    std::vector<Item> items;
    for (const auto& s : samples) {
      for (size_t i = 0; i < s.files.size(); ++i) items.push_back({&s, &s.files[i], i == 0});
    }
    std::deque<std::shared_future<Result<std::string>>> ahead;
    size_t next_fetch = 0;
    auto fetch_more = [&](size_t upto) {
      for (; next_fetch < items.size() && next_fetch < upto; ++next_fetch) {
        const SourceFile* f = items[next_fetch].file;
        if (f->size > kStreamAbove) {
          ahead.emplace_back();  // streamed when its turn comes
          continue;
        }
        auto promise = std::make_shared<std::promise<Result<std::string>>>();
        ahead.push_back(promise->get_future().share());
        // Captures what outlives this writer (the task may run after an early return).
        reads_.Submit([store = &src_, failed = &failed_, f, promise] {
          if (*failed) {
            promise->set_value(Status(StatusCode::kCancelled, "cancelled"));
            return;
          }
          promise->set_value(store->ReadAll(f->key));
        });
      }
    };
    Crc32c crc;
    SampleCrc sample_crc;
    uint64_t previous_bytes = 0;  // tar bytes of the sample being written (progress)
    uint64_t offset = 0;
    auto append = [&](std::string_view data) -> Status {
      crc.Update(data);
      offset += data.size();
      return writer->Append(data);
    };
    auto append_data = [&](std::string_view data) -> Status {
      sample_crc.Update(data);
      return append(data);
    };
    for (size_t i = 0; i < items.size(); ++i) {
      if (failed_) return Status(StatusCode::kCancelled, "cancelled");
      fetch_more(i + window_);
      auto fut = ahead.front();
      ahead.pop_front();
      const Item& it = items[i];
      if (it.first_of_sample) {
        if (!info.offsets.empty() && on_sample_) on_sample_(previous_bytes);
        previous_bytes = it.sample->tar_bytes;
        if (!info.offsets.empty()) info.sample_crcs.push_back(sample_crc.value());
        sample_crc.Reset();
        info.offsets.push_back(offset);
      }
      std::string name_in_tar = it.sample->key + "." + it.file->ext;
      FERRY_RETURN_IF_ERROR(append(TarFileHeader(name_in_tar, it.file->size)));
      uint64_t got = 0;
      if (fut.valid()) {
        FERRY_ASSIGN_OR_RETURN(std::string data, fut.get());
        got = data.size();
        if (got == it.file->size) FERRY_RETURN_IF_ERROR(append_data(data));
      } else {
        FERRY_RETURN_IF_ERROR(src_.Read(it.file->key, {}, [&](std::string_view chunk) -> Status {
          if (got + chunk.size() > it.file->size) return Status();  // size check below
          got += chunk.size();
          return append_data(chunk);
        }));
      }
      if (got != it.file->size) {
        return Status(StatusCode::kFailedPrecondition,
                      "'" + src_.UrlFor(it.file->key) + "' changed while packing (listed " +
                          std::to_string(it.file->size) + " bytes, read " + std::to_string(got) +
                          ")");
      }
      FERRY_RETURN_IF_ERROR(append(TarPadding(it.file->size)));
    }
    if (!info.offsets.empty()) info.sample_crcs.push_back(sample_crc.value());
    if (!info.offsets.empty() && on_sample_) on_sample_(previous_bytes);
    FERRY_RETURN_IF_ERROR(append(TarEnd()));
    FERRY_ASSIGN_OR_RETURN(auto committed, writer->Commit());
    info.size = offset;
    info.crc32c = Crc32cHex(crc.value());
    return info;
  }

 private:
  storage::Store& src_;
  ThreadPool& reads_;
  size_t window_;
  const std::atomic<bool>& failed_;
  const std::function<void(uint64_t)>& on_sample_;
};

// Counts what has been written and reports it through PackOptions::on_progress.
struct ProgressCounter {
  const PackOptions& options;
  PackProgress totals;
  std::atomic<uint64_t> samples{0}, bytes{0};
  void Add(uint64_t sample_bytes) {
    PackProgress p = totals;
    p.samples = samples.fetch_add(1) + 1;
    p.bytes = bytes.fetch_add(sample_bytes) + sample_bytes;
    if (options.on_progress) options.on_progress(p);
  }
};

// Writes `shards` as one dataset named by `naming` in `dst` (shards, then its index).
Result<PackedSplit> WriteDataset(storage::Store& src, storage::Store& dst,
                                 const std::string& dir_key, const ShardNaming& naming,
                                 const std::vector<std::vector<PlannedSample>>& shards,
                                 const PackOptions& options, ProgressCounter& progress) {
  std::vector<Result<ShardInfo>> results(shards.size(), Status(StatusCode::kCancelled, "not run"));
  std::atomic<bool> failed{false};
  std::function<void(uint64_t)> on_sample = [&](uint64_t b) { progress.Add(b); };
  {
    ThreadPool reads(std::max(1, options.reads));
    int jobs = std::max(1, std::min<int>(options.jobs, static_cast<int>(shards.size())));
    int window = std::max(4, options.reads / jobs);
    ThreadPool writers(jobs);
    for (size_t i = 0; i < shards.size(); ++i) {
      writers.Submit([&, i] {
        ShardWriter w(src, reads, window, failed, on_sample);
        std::string name = naming.ShardName(i);
        results[i] = w.Write(dst, dir_key + name, name, shards[i]);
        if (!results[i].ok())
          failed = true;
        else
          Log(LogLevel::kDebug, "wrote {}", name);
      });
    }
    writers.WaitIdle();
    reads.WaitIdle();
  }
  for (auto& r : results) {
    if (!r.ok() && r.status().code() != StatusCode::kCancelled) return r.status();
  }
  PackedSplit out;
  for (auto& r : results) {
    if (!r.ok()) return r.status();
    out.index.shards.push_back(std::move(*r));
  }
  // Written last: the index is what makes the shards a dataset.
  std::string index_key = dir_key + naming.IndexName();
  FERRY_RETURN_IF_ERROR(dst.WriteAll(index_key, IndexToJson(out.index)).status());
  out.index_url = dst.UrlFor(index_key);
  return out;
}

// The samples dealt out to the splits: a seeded permutation cut at the cumulative fractions,
// each part back in key order.
std::vector<std::vector<PlannedSample>> DealSplits(std::vector<PlannedSample> samples,
                                                   const std::vector<SplitShare>& split,
                                                   uint64_t seed) {
  Shuffle(samples, seed);
  std::vector<std::vector<PlannedSample>> parts(split.size());
  double cumulative = 0;
  size_t begin = 0;
  for (size_t i = 0; i < split.size(); ++i) {
    cumulative += split[i].fraction;
    size_t end =
        i + 1 == split.size()
            ? samples.size()
            : std::min(samples.size(), static_cast<size_t>(std::llround(
                                           cumulative * static_cast<double>(samples.size()))));
    end = std::max(end, begin);
    for (size_t k = begin; k < end; ++k) parts[i].push_back(std::move(samples[k]));
    std::sort(parts[i].begin(), parts[i].end(),
              [](const PlannedSample& a, const PlannedSample& b) { return a.key < b.key; });
    begin = end;
  }
  return parts;
}

}  // namespace

Result<std::vector<SplitShare>> ParseSplit(std::string_view spec) {
  std::vector<SplitShare> out;
  double sum = 0;
  for (std::string_view piece : Split(spec, ',')) {
    std::string part(piece);
    size_t eq = part.find('=');
    auto bad = [&](const std::string& why) {
      return InvalidArgument(fmt::format("--split '{}': {}", spec, why));
    };
    if (eq == std::string::npos) return bad("'" + part + "' is not NAME=FRACTION");
    std::string name = part.substr(0, eq), value = part.substr(eq + 1);
    if (name.empty() ||
        name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                               "0123456789_.-") != std::string::npos) {
      return bad("split name '" + name + "' must be letters, digits, '_', '.' or '-'");
    }
    for (const auto& s : out) {
      if (s.name == name) return bad("split '" + name + "' is named twice");
    }
    char* end = nullptr;
    double f = std::strtod(value.c_str(), &end);
    if (value.empty() || end != value.c_str() + value.size() || !(f > 0) || f > 1) {
      return bad("fraction '" + value + "' of '" + name + "' is not a number in (0, 1]");
    }
    out.push_back({name, f});
    sum += f;
  }
  if (out.size() < 2)
    return InvalidArgument(
        fmt::format("--split '{}': name at least two splits, "
                    "e.g. train=0.9,val=0.1",
                    spec));
  if (std::fabs(sum - 1.0) > 1e-6) {
    return InvalidArgument(
        fmt::format("--split '{}': the fractions add up to {:g}, not 1", spec, sum));
  }
  return out;
}

Result<PackReport> PackShards(storage::StoreRegistry& registry, const std::string& src_url,
                              const std::string& dst_prefix, const PackOptions& options) {
  auto start = std::chrono::steady_clock::now();
  ShardNaming naming = NamingFor(dst_prefix);
  if (naming.stem.empty())
    return InvalidArgument("destination prefix '" + dst_prefix + "' has no name");
  // One dataset, or one per split.
  std::vector<std::pair<std::string, ShardNaming>> outputs;
  if (options.split.empty()) {
    outputs.push_back({"", naming});
  } else {
    bool dir_only = dst_prefix.empty() || dst_prefix.back() == '/';
    for (const auto& s : options.split) {
      outputs.push_back({s.name, {naming.dir, dir_only ? s.name : naming.stem + "-" + s.name}});
    }
  }
  FERRY_ASSIGN_OR_RETURN(auto src, registry.Open(src_url));
  FERRY_ASSIGN_OR_RETURN(auto dst, registry.Open(naming.dir));
  const std::string dir_key = storage::DirectoryPrefix(dst.key);
  for (const auto& [name, n] : outputs) {
    const std::string index_key = dir_key + n.IndexName();
    if (!dst.store->Stat(index_key).ok()) continue;
    if (!options.overwrite) {
      return Status(StatusCode::kAlreadyExists,
                    "'" + dst.store->UrlFor(index_key) +
                        "' exists: a dataset is already there (--overwrite replaces it)");
    }
    // No index may describe shards while they are being replaced.
    FERRY_RETURN_IF_ERROR(dst.store->Delete(index_key));
  }
  PackReport report;
  FERRY_ASSIGN_OR_RETURN(auto samples, ListSamples(src, options.filter, &report));
  if (report.hidden) {
    Log(LogLevel::kInfo, "skipped {} dotfile(s) (names starting with '.'; --dotfiles packs them)",
        report.hidden);
  }
  ProgressCounter progress{.options = options};
  progress.totals.total_samples = samples.size();
  for (const auto& s : samples) progress.totals.total_bytes += s.tar_bytes;
  if (options.on_progress) options.on_progress(progress.totals);

  std::vector<std::vector<PlannedSample>> parts;
  if (options.split.empty()) {
    parts.push_back(std::move(samples));
  } else {
    parts = DealSplits(std::move(samples), options.split, options.seed);
  }
  for (size_t i = 0; i < parts.size(); ++i) {
    if (options.shuffle) Shuffle(parts[i], options.seed + i);
    auto shards = AssignShards(std::move(parts[i]), options);
    Log(LogLevel::kInfo, "packing {}{} shard(s)",
        outputs[i].first.empty() ? "" : outputs[i].first + ": ", shards.size());
    FERRY_ASSIGN_OR_RETURN(auto written,
                           WriteDataset(*src.store, *dst.store, dir_key, outputs[i].second, shards,
                                        options, progress));
    written.name = outputs[i].first;
    for (const auto& s : written.index.shards) report.index.shards.push_back(s);
    report.splits.push_back(std::move(written));
  }
  report.index_url = report.splits.front().index_url;
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

std::optional<std::string> FewShardsWarning(const DatasetIndex& index, const std::string& what) {
  const size_t shards = index.shards.size();
  const uint64_t samples = index.samples();
  if (shards >= kMinShards || samples < kMinShards) return std::nullopt;
  // A fixed sample count is the exact remedy: floor(samples / kMinShards) per shard makes at
  // least kMinShards shards, whatever the samples' sizes.
  const uint64_t per_shard = samples / kMinShards;
  const uint64_t would_make = (samples + per_shard - 1) / per_shard;
  return fmt::format(
      "{}{} shard(s) for {} samples: readers take whole shards, so DataLoader workers beyond {} "
      "(per rank) would idle; --samples-per-shard {} makes {}",
      what.empty() ? "" : what + ": ", shards, samples, shards, per_shard, would_make);
}

}  // namespace ferry::shard
