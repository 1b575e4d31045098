// MultipartUploads::Complete and Abort (multipart.h): checking the stored parts, publishing
// (the PartWriter's commit, or the staged parts concatenated into one Writer) and removing the
// upload's state.

#include <algorithm>

#include "base/log.h"
#include "base/strings.h"
#include "tracker/artifacts/artifact_path.h"
#include "tracker/artifacts/multipart.h"
#include "tracker/artifacts/multipart_internal.h"

namespace ferry::tracker::artifacts {

namespace {

std::string StripQuotes(std::string_view etag) {
  etag = Trim(etag);
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') etag = etag.substr(1);
  if (!etag.empty() && etag.back() == '"') etag.remove_suffix(1);
  return ToLower(etag);
}

}  // namespace

Result<std::shared_ptr<MultipartUploads::Upload>> MultipartUploads::BeginFinish(
    std::string_view path, std::string_view upload_id) {
  FERRY_ASSIGN_OR_RETURN(auto u, Open(upload_id));
  FERRY_ASSIGN_OR_RETURN(std::string clean, CleanArtifactPath(path));
  if (clean != u->path) {
    return InvalidArgument("upload '" + u->id + "' is for '" + u->path + "', not '" + clean + "'");
  }
  MutexLock lock(u->mu);
  if (u->finishing || !u->writing.empty()) {
    return Status(StatusCode::kFailedPrecondition,
                  "parts of upload '" + u->id + "' are still being written");
  }
  u->finishing = true;
  return u;
}

Result<storage::ObjectInfo> MultipartUploads::Complete(std::string_view path,
                                                       std::string_view upload_id,
                                                       const std::vector<PartInfo>& parts) {
  FERRY_ASSIGN_OR_RETURN(auto u, BeginFinish(path, upload_id));
  auto unfinish = [&](Status s) {
    MutexLock lock(u->mu);
    u->finishing = false;
    return s;
  };
  auto stored = StoredParts(*u);
  if (!stored.ok()) return unfinish(stored.status());
  std::map<int, PartInfo> by_number;
  for (const PartInfo& p : *stored) by_number[p.number] = p;
  for (int i = 1; i <= u->num_parts; ++i) {
    if (!by_number.contains(i)) {
      return unfinish(
          Status(StatusCode::kFailedPrecondition,
                 "part " + std::to_string(i) + " of upload '" + u->id + "' has not been uploaded"));
    }
  }
  for (const PartInfo& p : parts) {
    auto it = by_number.find(p.number);
    if (it == by_number.end()) {
      return unfinish(
          InvalidArgument("part " + std::to_string(p.number) + " is not in the upload"));
    }
    if (!p.etag.empty() && StripQuotes(p.etag) != it->second.etag) {
      return unfinish(InvalidArgument("part " + std::to_string(p.number) + " has ETag " +
                                      it->second.etag + ", not " + StripQuotes(p.etag)));
    }
  }
  Result<storage::ObjectInfo> info = Internal("not committed");
  if (u->direct) {
    MutexLock lock(u->mu);
    if (Status s = u->OpenWriter(*store_); !s.ok()) {
      u->finishing = false;
      return s;
    }
    info = u->writer->Commit();
    u->writer.reset();
  } else {
    auto w = store_->NewWriter(u->key, {});
    if (!w.ok()) return unfinish(w.status());
    for (int i = 1; i <= u->num_parts; ++i) {
      Status s = store_->Read(Dir(u->id) + "/part-" + std::to_string(i), {},
                              [&](std::string_view c) { return (*w)->Append(c); });
      if (!s.ok()) {
        (*w)->Abort();
        return unfinish(s);
      }
    }
    info = (*w)->Commit();
  }
  if (!info.ok()) return unfinish(info.status());
  FERRY_RETURN_IF_ERROR(Forget(u->id, /*delete_state=*/true));
  return info;
}

Status MultipartUploads::Abort(std::string_view path, std::string_view upload_id) {
  FERRY_ASSIGN_OR_RETURN(auto u, BeginFinish(path, upload_id));
  {
    MutexLock lock(u->mu);
    if (u->writer) {
      u->writer->Abort();
      u->writer.reset();
    } else if (u->direct) {
      FERRY_RETURN_IF_ERROR(store_->AbortPartWrite(u->key, u->resume_token));
    }
  }
  return Forget(u->id, /*delete_state=*/true);
}

Result<int> MultipartUploads::ExpireIdle(std::chrono::seconds max_idle, SystemTime now) {
  const std::string base = JoinKey(root_key_, kUploadsDir) + "/";
  std::map<std::string, SystemTime> last_change;  // upload id -> newest state object
  storage::ListOptions o;
  o.prefix = base;
  FERRY_RETURN_IF_ERROR(store_->ListAll(o, [&](const storage::ListPage& page) {
    for (const auto& obj : page.objects) {
      std::string_view rest = std::string_view(obj.key).substr(base.size());
      std::string id(rest.substr(0, rest.find('/')));
      auto when = obj.modified.value_or(now);
      auto [it, fresh] = last_change.emplace(id, when);
      if (!fresh && when > it->second) it->second = when;
    }
    return Status();
  }));
  int aborted = 0;
  for (const auto& [id, when] : last_change) {
    if (now - when < max_idle) continue;
    auto u = Open(id);
    if (!u.ok()) continue;
    {
      MutexLock lock((*u)->mu);
      if (!(*u)->writing.empty() || (*u)->finishing) continue;
    }
    Status s = Abort((*u)->path, id);
    if (s.ok()) {
      ++aborted;
    } else {
      Log(LogLevel::kWarn, "artifacts: cannot abort abandoned upload {}: {}", id, s.message());
    }
  }
  return aborted;
}

Status MultipartUploads::Forget(const std::string& upload_id, bool delete_state) {
  {
    MutexLock lock(mu_);
    open_.erase(upload_id);
  }
  if (!delete_state) return Status();
  storage::ListOptions o;
  o.prefix = Dir(upload_id) + "/";
  std::vector<std::string> keys;
  FERRY_RETURN_IF_ERROR(store_->ListAll(o, [&](const storage::ListPage& page) {
    for (const auto& obj : page.objects) keys.push_back(obj.key);
    return Status();
  }));
  // upload.json last: while it exists, the upload can still be described and aborted.
  std::partition(keys.begin(), keys.end(),
                 [](const std::string& k) { return !EndsWith(k, "/upload.json"); });
  for (const std::string& k : keys) FERRY_RETURN_IF_ERROR(store_->Delete(k));
  PruneEmptyDirectories(*store_, Dir(upload_id), root_key_);
  return Status();
}

}  // namespace ferry::tracker::artifacts
