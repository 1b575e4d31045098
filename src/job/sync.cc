#include "job/sync.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "base/log.h"
#include "base/redact.h"
#include "base/strings.h"
#include "base/time_format.h"
#include "transfer/copy_engine.h"
#include "transfer/glob_filter.h"

#ifndef FERRY_VERSION
#define FERRY_VERSION "dev"
#endif

namespace ferry::job {

namespace {

std::string Now() { return FormatIso8601(std::chrono::system_clock::now()); }

// Removes local files matching --delete-after-upload whose upload this sync verified, unless
// they changed since the copy listed them (the command may be rewriting them).
void DeleteUploaded(storage::OpenedUrl& src, const Output& out, const RunOptions& options,
                    const std::vector<storage::ObjectInfo>& in_sync) {
  transfer::GlobFilter filter(options.delete_after_upload, {});
  uint64_t deleted = 0, bytes = 0;
  for (const auto& uploaded : in_sync) {
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

nlohmann::json Manifest(const RunIdentity& id, const RunOptions& options, const ChildState& child,
                        bool final_sync, nlohmann::json files,
                        const std::vector<SkippedFile>& skipped) {
  nlohmann::json skipped_json = nlohmann::json::array();
  for (const auto& f : skipped) skipped_json.push_back({{"path", f.path}, {"reason", f.reason}});
  std::string command;
  for (const auto& a : options.command) command += (command.empty() ? "" : " ") + a;
  nlohmann::json m = {{"run_id", id.job},
                      {"attempt", id.attempt},
                      {"rank", id.rank},
                      {"host", id.host},
                      {"ferry_version", FERRY_VERSION},
                      {"command", Redact(command)},
                      {"written_at", Now()},
                      {"final", final_sync},
                      {"files", std::move(files)},
                      {"skipped", std::move(skipped_json)},
                      {"state", child.running ? "running" : "finished"}};
  if (!child.running && child.exit_code >= 0) {
    m["exit_code"] = child.exit_code;
    m["exit"] = child.how;
  }
  return m;
}

}  // namespace

Result<std::string> LatestPointerKey(const std::string& tmpl, const std::string& rank) {
  FERRY_ASSIGN_OR_RETURN(auto parsed, storage::ParseUrl(tmpl));
  std::string root = storage::DirectoryPrefix(parsed.key);
  if (size_t field = parsed.key.find('{'); field != std::string::npos) {
    size_t slash = parsed.key.rfind('/', field);
    root = slash == std::string::npos ? "" : parsed.key.substr(0, slash + 1);
  }
  return root + (rank == "0" ? "_ferry/latest.json" : "_ferry/latest-rank" + rank + ".json");
}

Result<std::vector<SkippedFile>> SyncOutput(storage::StoreRegistry& registry, const Output& out,
                                            SyncKind kind, const RunIdentity& id,
                                            const RunOptions& options, const ChildState& child,
                                            const std::atomic<bool>* cancel) {
  const bool final_sync = kind == SyncKind::kFinal;
  FERRY_ASSIGN_OR_RETURN(auto src, registry.Open(out.dir + "/"));
  FERRY_ASSIGN_OR_RETURN(auto dst, registry.Open(storage::DirectoryPrefix(out.url)));
  transfer::CopyOptions copy{.recursive = true,
                             .follow_symlinks = options.follow_symlinks,
                             .cancel = cancel,
                             .report_in_sync = !options.delete_after_upload.empty(),
                             .leave_out_unstable_sources = true};
  if (kind == SyncKind::kPeriodic) copy.min_age = std::chrono::seconds(2);
  // A trigger file inside an output directory is a request, not an output.
  std::filesystem::path trigger = options.trigger_file;
  if (!trigger.empty() && StartsWith(trigger.string(), out.dir + "/")) {
    copy.exclude.push_back(trigger.string().substr(out.dir.size() + 1));
  }
  transfer::ProgressCounters counters;
  auto result = transfer::RunCopy(src, dst, copy, counters);
  // NotFound with nothing planned: an empty output directory, still worth a manifest.
  if (!result.status.ok() &&
      (result.status.code() != StatusCode::kNotFound || result.report.files_total > 0)) {
    return result.status;
  }
  std::vector<SkippedFile> skipped;
  for (const auto& o : result.report.unstable) {
    skipped.push_back({o.key.substr(std::min(o.key.size(), src.key.size())), o.reason});
  }
  std::sort(skipped.begin(), skipped.end(),
            [](const SkippedFile& a, const SkippedFile& b) { return a.path < b.path; });
  LogSkipped(out, kind, skipped);

  nlohmann::json files = nlohmann::json::array();
  FERRY_RETURN_IF_ERROR(dst.store->ListAll({.prefix = dst.key}, [&](const storage::ListPage& page) {
    for (const auto& o : page.objects) {
      std::string rel = o.key.substr(dst.key.size());
      if (StartsWith(rel, "_ferry/")) continue;
      files.push_back({{"path", rel},
                       {"size", o.size},
                       {"etag", o.etag},
                       {"modified", o.modified ? FormatIso8601(*o.modified) : ""}});
    }
    return Status();
  }));
  nlohmann::json manifest = Manifest(id, options, child, final_sync, std::move(files), skipped);
  // Entries the listing left out by rule (links out of the output directory, loops, special
  // files): recorded, never uploaded, not a failure.
  nlohmann::json left_out = nlohmann::json::array();
  for (const auto& e : result.report.left_out) {
    left_out.push_back({{"path", e.key.substr(std::min(e.key.size(), src.key.size()))},
                        {"reason", storage::SkipKindName(e.kind)},
                        {"target", e.detail}});
  }
  manifest["left_out"] = std::move(left_out);
  // Written last: its presence and contents say which files form a complete set.
  FERRY_RETURN_IF_ERROR(
      dst.store->WriteAll(dst.key + "_ferry/manifest.json", manifest.dump(2) + "\n").status());

  // Then the pointer to the newest complete set (last writer wins among concurrent jobs).
  FERRY_ASSIGN_OR_RETURN(std::string latest, LatestPointerKey(out.tmpl, id.rank));
  nlohmann::json pointer = {{"url", out.url},
                            {"manifest", dst.store->UrlFor(dst.key + "_ferry/manifest.json")},
                            {"run_id", id.job},
                            {"attempt", id.attempt},
                            {"rank", id.rank},
                            {"final", final_sync},
                            {"state", manifest["state"]},
                            {"written_at", manifest["written_at"]}};
  FERRY_RETURN_IF_ERROR(
      dst.store->WriteAll(latest, pointer.dump(2) + "\n").status().WithContext("latest pointer"));

  if (!options.delete_after_upload.empty())
    DeleteUploaded(src, out, options, result.report.in_sync);
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
                         SyncKind kind, const RunIdentity& id, const RunOptions& options,
                         const ChildState& child, const std::atomic<bool>* cancel) {
  SyncRound round;
  for (const auto& o : outputs) {
    auto skipped = SyncOutput(registry, o, kind, id, options, child, cancel);
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
    round.skipped += skipped->size();
    Log(LogLevel::kInfo, "synced '{}' to '{}'{}", o.dir, o.url,
        skipped->empty() ? "" : fmt::format(", {} file(s) left out", skipped->size()));
  }
  return round;
}

}  // namespace ferry::job
