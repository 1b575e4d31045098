#include "job/sync.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "base/log.h"
#include "base/strings.h"
#include "base/time_format.h"
#include "job/job_records.h"
#include "transfer/copy_engine.h"
#include "transfer/glob_filter.h"
#include "transfer/progress.h"

namespace ferry::job {

namespace {

std::string Now() { return FormatIso8601(std::chrono::system_clock::now()); }

// Removes local files matching --delete-after-upload whose upload this sync verified, unless
// they changed since the copy listed them (the command may be rewriting them). Each one deleted
// is remembered: later manifests still list it ("kept").
void DeleteUploaded(storage::OpenedUrl& src, const Output& out, const RunOptions& options,
                    const std::vector<ManifestFile>& verified,
                    const std::vector<transfer::InSyncObject>& in_sync, OutputHistory& history) {
  transfer::GlobFilter filter(options.delete_after_upload, {});
  uint64_t deleted = 0, bytes = 0;
  for (size_t i = 0; i < in_sync.size(); ++i) {
    const storage::ObjectInfo& uploaded = in_sync[i].src;
    std::string rel = uploaded.key.substr(src.key.size());
    if (!filter.Accepts(rel)) continue;
    auto now = src.store->Stat(uploaded.key);
    if (!now.ok() || now->size != uploaded.size || now->modified != uploaded.modified) {
      Log(LogLevel::kInfo, "keeping '{}/{}': changed since its upload", out.dir, rel);
      continue;
    }
    Status s = src.store->Delete(uploaded.key);
    if (!s.ok()) {
      Log(LogLevel::kWarn, "--delete-after-upload: {}", s.message());
      continue;
    }
    ManifestFile kept = verified[i];
    kept.status = "kept";
    history.kept[kept.path] = std::move(kept);
    ++deleted;
    bytes += uploaded.size;
  }
  if (deleted > 0) {
    Log(LogLevel::kInfo, "deleted {} uploaded file(s), {}, from '{}'", deleted, HumanBytes(bytes),
        out.dir);
  }
}

// Logs what a sync left out, at most a few lines.
void LogSkipped(const Output& out, SyncKind kind, const std::vector<SkippedFile>& skipped) {
  constexpr size_t kShown = 5;
  for (size_t i = 0; i < skipped.size() && i < kShown; ++i) {
    Log(LogLevel::kWarn, "'{}/{}' {}: {}", out.dir, skipped[i].path, skipped[i].reason,
        kind == SyncKind::kFinal ? "not uploaded by the final stage-out"
                                 : "left for the next sync");
  }
  if (skipped.size() > kShown) {
    Log(LogLevel::kWarn, "... and {} more file(s) of '{}' left out", skipped.size() - kShown,
        out.dir);
  }
}

std::string Relative(const std::string& key, const std::string& prefix) {
  return key.substr(std::min(key.size(), prefix.size()));
}

}  // namespace

Result<std::vector<SkippedFile>> SyncOutput(storage::StoreRegistry& registry, const Output& out,
                                            SyncKind kind, const SyncContext& ctx,
                                            OutputHistory& history, const std::atomic<bool>* cancel,
                                            OutputSyncReport* report, bool progress_lines) {
  const bool final_sync = kind == SyncKind::kFinal;
  const RunOptions& options = ctx.options;
  FERRY_ASSIGN_OR_RETURN(auto src, registry.Open(out.dir + "/"));
  FERRY_ASSIGN_OR_RETURN(auto dst, registry.Open(storage::DirectoryPrefix(out.url)));
  transfer::CopyOptions copy{.recursive = true,
                             .follow_symlinks = options.follow_symlinks,
                             .cancel = cancel,
                             .report_in_sync = true,
                             .leave_out_unstable_sources = true};
  if (kind == SyncKind::kPeriodic) copy.min_age = std::chrono::seconds(2);
  // A trigger file inside an output directory is a request, not an output.
  std::filesystem::path trigger = options.trigger_file;
  if (!trigger.empty() && StartsWith(trigger.string(), out.dir + "/")) {
    copy.exclude.push_back(trigger.string().substr(out.dir.size() + 1));
  }
  transfer::ProgressCounters counters;
  transfer::CopyResult result;
  {
    transfer::ProgressReporter progress(
        counters, progress_lines ? transfer::ProgressMode::kLines : transfer::ProgressMode::kNone);
    result = transfer::RunCopy(src, dst, copy, counters);
  }
  if (report) {
    report->uploaded = result.report.files_copied;
    report->unchanged = result.report.files_skipped;
    report->bytes_uploaded = result.report.bytes_copied;
    report->left_out = result.report.unstable.size();
  }
  // NotFound with nothing planned: an empty output directory, still worth a manifest.
  if (!result.status.ok() &&
      (result.status.code() != StatusCode::kNotFound || result.report.files_total > 0)) {
    return result.status;
  }
  std::vector<SkippedFile> skipped;
  for (const auto& o : result.report.unstable) {
    skipped.push_back({Relative(o.key, src.key), o.reason});
  }
  std::sort(skipped.begin(), skipped.end(),
            [](const SkippedFile& a, const SkippedFile& b) { return a.path < b.path; });
  LogSkipped(out, kind, skipped);

  // Exactly what this sync put or found at the destination, then what earlier syncs of this run
  // put there and ferry deleted locally since.
  std::vector<ManifestFile> verified;
  for (const auto& o : result.report.in_sync) {
    verified.push_back({.path = Relative(o.src.key, src.key),
                        .size = o.src.size,
                        .crc32c = o.crc32c,
                        .status = o.copied ? "uploaded" : "unchanged"});
  }
  std::vector<ManifestFile> files = verified;
  for (const auto& f : files) history.kept.erase(f.path);  // back, or rewritten
  for (const auto& [path, f] : history.kept) files.push_back(f);
  std::sort(files.begin(), files.end(),
            [](const ManifestFile& a, const ManifestFile& b) { return a.path < b.path; });
  std::vector<LeftOutEntry> left_out;
  for (const auto& e : result.report.left_out) {
    left_out.push_back(
        {Relative(e.key, src.key), std::string(storage::SkipKindName(e.kind)), e.detail});
  }
  const std::string written_at = Now();
  const std::string manifest_key = dst.key + "_ferry/" + ManifestName(ctx.id.rank);
  std::string manifest = ManifestJson({.id = ctx.id,
                                       .options = options,
                                       .child = ctx.child,
                                       .final_sync = final_sync,
                                       .written_at = written_at,
                                       .files = std::move(files),
                                       .skipped = skipped,
                                       .left_out = std::move(left_out),
                                       .resumed_from = ctx.resumed_from});
  // Written last: its presence and contents say which files form a complete set.
  FERRY_RETURN_IF_ERROR(dst.store->WriteAll(manifest_key, manifest).status());

  // Then the job's pointer to its newest complete set.
  FERRY_RETURN_IF_ERROR(dst.store
                            ->WriteAll(out.records_key + out.pointer_name,
                                       PointerJson(out.url, dst.store->UrlFor(manifest_key), ctx.id,
                                                   ctx.child, final_sync, written_at))
                            .status()
                            .WithContext("latest pointer"));

  if (!options.delete_after_upload.empty()) {
    DeleteUploaded(src, out, options, verified, result.report.in_sync, history);
  }
  return skipped;
}

Status SyncRound::AsStatus() const {
  if (!status.ok() || skipped == 0) return status;
  return Status(StatusCode::kFailedPrecondition,
                std::to_string(skipped) +
                    " file(s) changed, vanished or could not be read while being uploaded and "
                    "were left out (listed as skipped in the manifest); first: " +
                    first_skipped);
}

SyncRound SyncAllOutputs(storage::StoreRegistry& registry, const std::vector<Output>& outputs,
                         SyncKind kind, const SyncContext& ctx, std::vector<OutputHistory>& history,
                         const std::atomic<bool>* cancel, bool progress_lines) {
  SyncRound round;
  history.resize(outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Output& o = outputs[i];
    auto start = std::chrono::steady_clock::now();
    OutputSyncReport& report = round.outputs.emplace_back();
    report.dir = o.dir;
    report.url = o.url;
    auto skipped = SyncOutput(registry, o, kind, ctx, history[i], cancel, &report, progress_lines);
    report.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!skipped.ok()) report.status = skipped.status();
    if (!skipped.ok() && skipped.status().code() == StatusCode::kCancelled) {
      Log(LogLevel::kInfo, "sync of '{}' stopped: {}", o.dir,
          kind == SyncKind::kFinal ? "a second stop signal" : "the command is ending");
      if (round.status.ok()) round.status = skipped.status();
      break;
    }
    if (!skipped.ok()) {
      Status s = skipped.status().WithContext("sync of '" + o.dir + "' to '" + o.url + "'");
      Log(LogLevel::kError, "{}", s.message());
      if (round.status.ok()) round.status = s;
      continue;
    }
    if (!skipped->empty() && round.skipped == 0) {
      round.first_skipped =
          "'" + o.dir + "/" + skipped->front().path + "' (" + skipped->front().reason + ")";
    }
    round.skipped += skipped->size();  // the user's summary line: RunEvent (run.h)
  }
  return round;
}

}  // namespace ferry::job
