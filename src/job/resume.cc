#include "job/resume.h"

#include <filesystem>

#include "base/crc32c.h"
#include "base/log.h"
#include "transfer/copy_engine.h"

namespace ferry::job {

namespace {

// The destination directory a manifest URL belongs to: "<dst>/_ferry/manifest*.json" -> "<dst>/".
std::string SetUrl(const std::string& manifest_url) {
  size_t at = manifest_url.rfind("_ferry/");
  return at == std::string::npos ? manifest_url : manifest_url.substr(0, at);
}

// The CRC32C of a file by reading it (when the copy did not establish it).
Result<uint32_t> CrcOf(storage::Store& store, const std::string& key) {
  Crc32c crc;
  FERRY_RETURN_IF_ERROR(store.Read(key, {}, [&](std::string_view chunk) {
    crc.Update(chunk);
    return Status();
  }));
  return crc.value();
}

// Copies one file of a set and checks it against the manifest. Returns whether it was copied
// (false: the same content was already there).
Result<bool> StageOne(const storage::OpenedUrl& src, const storage::OpenedUrl& dst,
                      const ManifestFile& f, const std::atomic<bool>& cancel) {
  const std::string name = "'" + src.store->UrlFor(src.key) + "'";
  transfer::ProgressCounters counters;
  transfer::CopyResult r =
      transfer::RunCopy(src, dst, {.cancel = &cancel, .report_in_sync = true}, counters);
  if (!r.status.ok()) return r.status.WithContext("resuming " + name);
  if (r.report.in_sync.size() != 1) {
    return Status(StatusCode::kInternal, "resuming " + name + ": the copy reported nothing");
  }
  const transfer::InSyncObject& got = r.report.in_sync.front();
  if (got.src.size != f.size) {
    return Status(StatusCode::kDataLoss, "resuming " + name + ": " + std::to_string(got.src.size) +
                                             " bytes, the manifest says " + std::to_string(f.size));
  }
  if (f.crc32c) {
    std::optional<uint32_t> crc = got.crc32c;
    if (!crc) {
      FERRY_ASSIGN_OR_RETURN(crc, CrcOf(*dst.store, dst.key));
    }
    if (*crc != *f.crc32c) {
      return Status(StatusCode::kDataLoss, "resuming " + name + ": CRC32C " + Crc32cHex(*crc) +
                                               ", the manifest says " + Crc32cHex(*f.crc32c) +
                                               " (changed since the checkpoint was written?)");
    }
  }
  return got.copied;
}

}  // namespace

Result<std::optional<ResumeSource>> FindResumeSource(storage::StoreRegistry& registry,
                                                     const std::string& pointer_url,
                                                     const std::string& job) {
  FERRY_ASSIGN_OR_RETURN(auto pointer, registry.Open(pointer_url));
  auto text = pointer.store->ReadAll(pointer.key);
  if (!text.ok() && text.status().code() == StatusCode::kNotFound) return std::nullopt;
  if (!text.ok()) return text.status().WithContext("reading the latest pointer");
  FERRY_ASSIGN_OR_RETURN(std::string manifest_url, PointerManifest(*text, pointer_url));
  FERRY_ASSIGN_OR_RETURN(auto manifest, registry.Open(manifest_url));
  auto body = manifest.store->ReadAll(manifest.key);
  if (!body.ok()) {
    return body.status().WithContext("the latest pointer '" + pointer_url + "' names '" +
                                     manifest_url + "'");
  }
  FERRY_ASSIGN_OR_RETURN(ResumeSource source, ParseManifest(*body, manifest_url));
  if (source.run_id != job) {
    return Status(StatusCode::kFailedPrecondition, "'" + manifest_url + "' belongs to run '" +
                                                       source.run_id + "', not to '" + job +
                                                       "'; not resuming another job's checkpoint");
  }
  source.url = SetUrl(manifest_url);
  return std::optional<ResumeSource>(std::move(source));
}

Result<StagedResume> StageResume(storage::StoreRegistry& registry, const ResumeSource& source,
                                 const std::string& dir, const std::atomic<bool>& cancel) {
  FERRY_ASSIGN_OR_RETURN(auto from, registry.Open(source.url));
  const std::string local_dir = std::filesystem::absolute(dir).string();
  FERRY_ASSIGN_OR_RETURN(auto to, registry.Open(local_dir + "/"));
  const std::string from_prefix = storage::DirectoryPrefix(from.key);
  const std::string to_prefix = storage::DirectoryPrefix(to.key);
  // One file after another: each large file is already copied in parallel parts by the copy
  // engine; four files at once were no faster on RGW (1.5 GiB in 9 files: 3.34 s against 3.41 s)
  // and tripled the peak RSS (285 MiB against 93 MiB; bench/resume.py, docs/benchmarks.md).
  StagedResume staged;
  for (const auto& f : source.files) {
    storage::OpenedUrl src = from, dst = to;
    src.key = from_prefix + f.path;
    src.url.trailing_slash = false;
    dst.key = to_prefix + f.path;
    dst.url.trailing_slash = false;
    FERRY_ASSIGN_OR_RETURN(bool copied, StageOne(src, dst, f, cancel));
    ++staged.files;
    staged.bytes += f.size;
    (copied ? staged.copied : staged.unchanged) += 1;
  }
  return staged;
}

}  // namespace ferry::job
