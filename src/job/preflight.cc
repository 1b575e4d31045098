#include "job/preflight.h"

#include <sys/statvfs.h>

#include <filesystem>
#include <random>
#include <set>

#include "base/strings.h"
#include "job/doctor.h"
#include "job/preflight_rules.h"

namespace ferry::job {

namespace {

// Bytes under an input URL (an object or a prefix).
Result<uint64_t> InputSize(storage::OpenedUrl& in) {
  if (!in.key.empty() && !in.url.trailing_slash) {
    auto info = in.store->Stat(in.key);
    if (info.ok()) return info->size;
  }
  uint64_t total = 0, count = 0;
  FERRY_RETURN_IF_ERROR(in.store->ListAll({.prefix = storage::DirectoryPrefix(in.key)},
                                          [&](const storage::ListPage& p) {
                                            for (const auto& o : p.objects) total += o.size;
                                            count += p.objects.size();
                                            return Status();
                                          }));
  if (count == 0) return NotFound("nothing at '" + in.store->UrlFor(in.key) + "'");
  return total;
}

Status ProbeOutput(storage::OpenedUrl& out) {
  std::random_device rd;
  std::string key = storage::DirectoryPrefix(out.key) + "_ferry/probe-" + std::to_string(rd());
  std::string data = "ferry preflight probe\n";
  FERRY_RETURN_IF_ERROR(out.store->WriteAll(key, data).status().WithContext("write probe"));
  auto back = out.store->ReadAll(key);
  Status del = out.store->Delete(key);
  if (!back.ok()) return back.status().WithContext("read back probe");
  if (*back != data) return Status(StatusCode::kDataLoss, "probe read back different bytes");
  return del.WithContext("delete probe");
}

// One line per bucket: where its credentials come from and whose they are (never the secret).
void CheckCredentials(storage::StoreRegistry& registry, const std::vector<std::string>& urls,
                      PreflightReport& r) {
  std::set<std::string> seen;
  for (const auto& url : urls) {
    auto parsed = storage::ParseUrl(url);
    if (!parsed.ok() || parsed->scheme != storage::Scheme::kS3) continue;
    if (!seen.insert(parsed->bucket).second) continue;
    std::string name = "credentials for s3://" + parsed->bucket;
    auto opened = registry.Open(url);
    if (!opened.ok()) {
      r.errors.push_back(name + ": " + opened.status().message());
      continue;
    }
    storage::StoreDescription d = opened->store->Describe();
    if (!d.credentials) {
      r.errors.push_back(name + ": " + d.credentials_error.message());
      continue;
    }
    r.lines.push_back(name + " (" + d.endpoint + "): " + d.credentials->summary);
  }
}

// The nearest directory at or above `dir` that exists: a directory not created yet will live on
// its filesystem. The preflight creates nothing (a run it stops leaves no directories behind).
std::string NearestExisting(const std::string& dir) {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::absolute(dir, ec);
  if (ec) return dir;
  while (!std::filesystem::exists(p, ec) && p.has_relative_path()) p = p.parent_path();
  return p.string();
}

}  // namespace

PreflightReport RunPreflight(storage::StoreRegistry& registry,
                             const std::vector<std::pair<std::string, std::string>>& inputs,
                             const std::vector<std::pair<std::string, std::string>>& outputs) {
  PreflightReport r;
  std::vector<std::string> urls;
  for (const auto& in : inputs) urls.push_back(in.first);
  for (const auto& out : outputs) urls.push_back(out.second);
  CheckCredentials(registry, urls, r);
  for (const auto& [src, dir] : inputs) {
    auto in = registry.Open(src);
    if (!in.ok()) {
      r.errors.push_back("input " + src + ": " + in.status().message());
      continue;
    }
    auto size = InputSize(*in);
    if (!size.ok()) {
      r.errors.push_back("input " + src + ": " + size.status().message());
      continue;
    }
    r.lines.push_back("input  " + src + ": readable, " + HumanBytes(*size));
    struct statvfs vfs;
    if (::statvfs(NearestExisting(dir).c_str(), &vfs) == 0) {
      uint64_t free_bytes = static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize;
      if (free_bytes < *size) {
        r.errors.push_back("stage-in target " + dir + " has " + HumanBytes(free_bytes) +
                           " free, the input needs " + HumanBytes(*size));
      }
    }
  }
  for (const auto& [dir, dst] : outputs) {
    auto out = registry.Open(dst);
    if (!out.ok()) {
      r.errors.push_back("output " + dst + ": " + out.status().message());
      continue;
    }
    Status probe = ProbeOutput(*out);
    if (!probe.ok()) {
      r.errors.push_back("output " + dst + ": not writable: " + probe.message());
    } else {
      r.lines.push_back("output " + dst + ": write, read back and delete work");
    }
    auto d = DiagnosePath(NearestExisting(dir), {.measure = false});
    if (d.ok()) {
      r.lines.push_back("output dir " + dir + ": " + d->verdict.kind + " (" +
                        std::string(PersistenceName(d->verdict.persistence)) + ")");
      std::optional<MountVerdict> destination;
      if (auto path = out.ok() ? out->store->LocalPathFor(out->key) : std::nullopt) {
        auto dd = DiagnosePath(NearestExisting(std::filesystem::path(*path).parent_path().string()),
                               {.measure = false});
        if (dd.ok()) destination = dd->verdict;
      }
      if (auto finding = OutputPersistence(dir, d->verdict, dst, destination)) {
        (finding->error ? r.errors : r.warnings).push_back(finding->line);
      }
    }
  }
  return r;
}

}  // namespace ferry::job
