#include "tracker/artifacts/multipart.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <memory>
#include <random>

#include "base/aligned_buffer.h"
#include "base/json_text.h"
#include "base/log.h"
#include "base/strings.h"
#include "tracker/artifacts/artifact_path.h"
#include "tracker/artifacts/multipart_internal.h"

namespace ferry::tracker::artifacts {

namespace {

std::string NewUploadId() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(rng()),
                static_cast<unsigned long long>(rng()));
  return buf;
}

bool ValidUploadId(std::string_view id) {
  return id.size() == 32 && std::all_of(id.begin(), id.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

}  // namespace

MultipartUploads::MultipartUploads(std::shared_ptr<storage::Store> store, std::string root_key)
    : store_(std::move(store)), root_key_(std::move(root_key)) {
  while (!root_key_.empty() && root_key_.back() == '/') root_key_.pop_back();
}

MultipartUploads::~MultipartUploads() = default;

std::string MultipartUploads::Dir(std::string_view upload_id) const {
  return JoinKey(root_key_, kUploadsDir) + "/" + std::string(upload_id);
}

// Abandoned uploads hold reserved space and parts: a Create frees them now and then.
void MultipartUploads::MaybeExpireIdle() {
  const auto now = std::chrono::system_clock::now();
  {
    MutexLock lock(mu_);
    if (last_sweep_ && now - *last_sweep_ <= kExpirySweepInterval) return;
    last_sweep_ = now;
  }
  auto n = ExpireIdle(kAbandonedUploadAge, now);
  if (!n.ok()) {
    Log(LogLevel::kWarn, "artifacts: expiring abandoned uploads failed: {}", n.status().message());
  } else if (*n > 0) {
    Log(LogLevel::kInfo, "artifacts: aborted {} upload(s) idle for more than {} h", *n,
        kAbandonedUploadAge.count());
  }
}

Result<UploadInfo> MultipartUploads::Create(const MultipartPlan& plan) {
  FERRY_ASSIGN_OR_RETURN(std::string path, CleanArtifactPath(plan.path));
  if (plan.num_parts < 1 || plan.num_parts > kMaxParts) {
    return InvalidArgument("num_parts must be between 1 and " + std::to_string(kMaxParts));
  }
  if (plan.size && *plan.size > kMaxUploadSize) {
    return InvalidArgument("size " + std::to_string(*plan.size) +
                           " is over the largest artifact, " + std::to_string(kMaxUploadSize) +
                           " bytes (5 TiB)");
  }
  MaybeExpireIdle();
  auto u = std::make_shared<Upload>();
  u->id = NewUploadId();
  u->path = path;
  u->key = JoinKey(root_key_, path);
  u->num_parts = plan.num_parts;
  if (plan.size.has_value() != plan.part_size.has_value()) {
    return InvalidArgument("size and part_size go together");
  }
  if (plan.size) {
    uint64_t size = *plan.size, ps = *plan.part_size;
    if (ps == 0 || (size + ps - 1) / ps != static_cast<uint64_t>(plan.num_parts) ||
        (size == 0 && plan.num_parts != 1)) {
      return InvalidArgument("num_parts " + std::to_string(plan.num_parts) + " does not fit size " +
                             std::to_string(size) + " in parts of " + std::to_string(ps));
    }
    u->size = size;
    u->part_size = ps;
    const storage::Capabilities caps = store_->capabilities();
    u->sub_size = caps.local_files ? kLocalSubPartSize : kSubPartSize;
    u->direct = caps.part_writes && size > 0 && ps % u->sub_size == 0 &&
                (caps.local_files || (size + u->sub_size - 1) / u->sub_size <= kMaxParts);
  }
  if (u->direct) {
    MutexLock lock(u->mu);
    FERRY_RETURN_IF_ERROR(u->OpenWriter(*store_));
  }
  nlohmann::json j{{"path", u->path},
                   {"num_parts", u->num_parts},
                   {"direct", u->direct},
                   {"size", u->size},
                   {"part_size", u->part_size},
                   {"sub_part_size", u->sub_size},
                   {"resume_token", u->resume_token}};
  FERRY_RETURN_IF_ERROR(store_->WriteAll(Dir(u->id) + "/upload.json", JsonText(j)).status());
  {
    MutexLock lock(mu_);
    open_[u->id] = u;
  }
  return UploadInfo{u->id, u->path, u->num_parts, u->direct, {}};
}

Result<std::shared_ptr<MultipartUploads::Upload>> MultipartUploads::Open(
    std::string_view upload_id) {
  if (!ValidUploadId(upload_id)) {
    return InvalidArgument("'" + std::string(upload_id) + "' is not an upload id");
  }
  {
    MutexLock lock(mu_);
    if (auto it = open_.find(upload_id); it != open_.end()) return it->second;
  }
  auto text = store_->ReadAll(Dir(upload_id) + "/upload.json");
  if (!text.ok()) {
    if (text.status().code() == StatusCode::kNotFound) {
      return NotFound("no multipart upload '" + std::string(upload_id) + "'");
    }
    return text.status();
  }
  auto j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object())
    return Internal("upload state of '" + std::string(upload_id) + "' is corrupt");
  auto u = std::make_shared<Upload>();
  u->id = std::string(upload_id);
  u->path = j.value("path", "");
  u->key = JoinKey(root_key_, u->path);
  u->num_parts = j.value("num_parts", 0);
  u->direct = j.value("direct", false);
  u->size = j.value("size", uint64_t{0});
  u->part_size = j.value("part_size", uint64_t{0});
  u->sub_size = j.value("sub_part_size", kSubPartSize);  // state written before it was recorded
  if (u->direct && (u->sub_size == 0 || u->part_size % u->sub_size != 0)) {
    return Internal("upload state of '" + std::string(upload_id) + "' is corrupt");
  }
  u->resume_token = j.value("resume_token", "");
  MutexLock lock(mu_);
  auto [it, inserted] = open_.emplace(u->id, u);
  return it->second;
}

Result<PartInfo> MultipartUploads::WritePart(std::string_view upload_id, int number,
                                             server::BodyReader& body, const UploadChecks& checks) {
  FERRY_ASSIGN_OR_RETURN(auto u, Open(upload_id));
  if (number < 1 || number > u->num_parts) {
    return InvalidArgument("part number " + std::to_string(number) + " is not in 1.." +
                           std::to_string(u->num_parts));
  }
  storage::PartWriter* writer = nullptr;
  {
    MutexLock lock(u->mu);
    if (u->finishing) return Status(StatusCode::kFailedPrecondition, "the upload is finishing");
    if (!u->writing.insert(number).second) {
      return Status(StatusCode::kAlreadyExists,
                    "part " + std::to_string(number) + " is being uploaded already");
    }
    if (u->direct) {
      if (Status s = u->OpenWriter(*store_); !s.ok()) {
        u->writing.erase(number);
        return s;
      }
    }
    writer = u->writer.get();
  }
  struct Done {
    Upload& u;
    int n;
    ~Done() {
      MutexLock lock(u.mu);
      u.writing.erase(n);
    }
  } done{*u, number};
  std::string part_key = Dir(u->id) + "/part-" + std::to_string(number);
  // The marker goes first: from now on the part counts as missing until it is complete again.
  FERRY_RETURN_IF_ERROR(store_->Delete(part_key + ".json"));
  uint64_t bytes = 0;
  std::string etag;  // the part's CRC32C (CopyVerified)
  if (u->direct) {
    const uint64_t expected = u->PartLength(number);
    if (checks.length && *checks.length != expected) {
      return InvalidArgument("part " + std::to_string(number) + " must have " +
                             std::to_string(expected) + " bytes, Content-Length is " +
                             std::to_string(*checks.length));
    }
    // The body is read straight into the sub-part buffer (the server fills a read up to the
    // buffer's size) and each full buffer goes to the PartWriter: one copy from the socket,
    // one into the store.
    int sub = static_cast<int>((number - 1) * (u->part_size / u->sub_size)) + 1;
    const size_t cap = static_cast<size_t>(std::min<uint64_t>(u->sub_size, expected + 1));
    // Page-aligned, so a store that writes with O_DIRECT takes it as it is (local_store.h).
    AlignedBuffer buf = NewAlignedBuffer(cap);
    if (!buf) return Status(StatusCode::kResourceExhausted, "out of memory for a part buffer");
    BodyVerifier verify(checks, /*want_crc32c=*/true);
    size_t fill = 0;
    while (true) {
      FERRY_ASSIGN_OR_RETURN(size_t n, body.Read(buf.get() + fill, cap - fill));
      verify.Update(std::string_view(buf.get() + fill, n));
      fill += n;
      if (verify.bytes() > expected) {
        return InvalidArgument("part " + std::to_string(number) + " is longer than " +
                               std::to_string(expected) + " bytes");
      }
      if (fill == u->sub_size || (n == 0 && fill > 0)) {
        FERRY_RETURN_IF_ERROR(writer->WritePart(sub++, std::string_view(buf.get(), fill)));
        fill = 0;
      }
      if (n == 0) break;
    }
    FERRY_RETURN_IF_ERROR(verify.Finish(&etag));
    bytes = verify.bytes();
    if (bytes != expected) {
      return InvalidArgument("part " + std::to_string(number) + " has " + std::to_string(bytes) +
                             " bytes, expected " + std::to_string(expected));
    }
  } else {
    FERRY_ASSIGN_OR_RETURN(auto w, store_->NewWriter(part_key, {}));
    Status s = CopyVerified(
        body, checks, [&](std::string_view c) { return w->Append(c); }, &bytes, &etag);
    if (!s.ok()) {
      w->Abort();
      return s;
    }
    FERRY_RETURN_IF_ERROR(w->Commit().status());
  }
  nlohmann::json marker{{"size", bytes}, {"etag", etag}};
  FERRY_RETURN_IF_ERROR(store_->WriteAll(part_key + ".json", JsonText(marker)).status());
  return PartInfo{number, bytes, etag};
}

Result<std::vector<PartInfo>> MultipartUploads::StoredParts(const Upload& u) {
  std::vector<PartInfo> parts;
  storage::ListOptions o;
  o.prefix = Dir(u.id) + "/part-";
  std::vector<std::string> markers;
  FERRY_RETURN_IF_ERROR(store_->ListAll(o, [&](const storage::ListPage& page) {
    for (const auto& obj : page.objects) {
      if (EndsWith(obj.key, ".json")) markers.push_back(obj.key);
    }
    return Status();
  }));
  for (const std::string& key : markers) {
    std::string_view n = key;
    n.remove_prefix(o.prefix.size());
    n.remove_suffix(5);
    auto number = ParseUint64(n);
    auto text = store_->ReadAll(key);
    if (!number || !text.ok()) continue;  // removed meanwhile (a part sent again)
    auto j = nlohmann::json::parse(*text, nullptr, false);
    if (!j.is_object()) continue;
    parts.push_back({static_cast<int>(*number), j.value("size", uint64_t{0}), j.value("etag", "")});
  }
  std::sort(parts.begin(), parts.end(),
            [](const PartInfo& a, const PartInfo& b) { return a.number < b.number; });
  return parts;
}

Result<UploadInfo> MultipartUploads::Describe(std::string_view upload_id) {
  FERRY_ASSIGN_OR_RETURN(auto u, Open(upload_id));
  FERRY_ASSIGN_OR_RETURN(auto parts, StoredParts(*u));
  return UploadInfo{u->id, u->path, u->num_parts, u->direct, std::move(parts)};
}

}  // namespace ferry::tracker::artifacts
