#include "tracker/artifacts/artifact_repo.h"

#include <algorithm>
#include <filesystem>
#include <vector>

#include "base/crc32c.h"
#include "base/hash.h"
#include "base/strings.h"
#include "tracker/artifacts/artifact_path.h"

namespace ferry::tracker::artifacts {

namespace {

// Bytes moved per BodyReader::Read: big enough that a local disk or an S3 part writer sees few
// calls, small enough that many concurrent uploads stay in a few hundred MiB.
constexpr size_t kCopyBuffer = 1 << 20;

std::string Base64OfHex(std::string_view hex) {
  std::vector<uint8_t> bytes;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    bytes.push_back(static_cast<uint8_t>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return Base64Encode(bytes);
}

bool IsHex(std::string_view s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

}  // namespace

Result<UploadChecks> ChecksFromHeaders(const server::Request& request) {
  UploadChecks c;
  if (request.body_stream) c.length = request.body_stream->content_length();
  if (auto md5 = request.headers.Get("Content-MD5")) c.md5_base64 = std::string(Trim(*md5));
  if (auto sha = request.headers.Get("x-ferry-sha256")) {
    c.sha256_hex = ToLower(Trim(*sha));
    if (c.sha256_hex.size() != 64 || !IsHex(c.sha256_hex)) {
      return InvalidArgument("x-ferry-sha256 must be 64 hex digits");
    }
  }
  if (auto digest = request.headers.Get("Digest")) {
    for (std::string_view item : Split(*digest, ',')) {
      item = Trim(item);
      size_t eq = item.find('=');
      if (eq != std::string_view::npos && EqualsIgnoreCase(item.substr(0, eq), "sha-256")) {
        c.sha256_base64 = std::string(item.substr(eq + 1));
      }
    }
  }
  return c;
}

struct BodyVerifier::Hashes {
  std::optional<HashStream> sha;
  std::optional<Md5Stream> md5;
  std::optional<Crc32c> crc;
};

BodyVerifier::BodyVerifier(const UploadChecks& checks, bool want_crc32c)
    : checks_(checks), h_(std::make_unique<Hashes>()) {
  if (!checks.sha256_hex.empty() || !checks.sha256_base64.empty()) {
    h_->sha.emplace(HashStream::Kind::kSha256);
  }
  if (!checks.md5_base64.empty()) h_->md5.emplace();
  if (want_crc32c) h_->crc.emplace();
}

BodyVerifier::~BodyVerifier() = default;

void BodyVerifier::Update(std::string_view chunk) {
  if (h_->sha) h_->sha->Update(chunk);
  if (h_->md5) h_->md5->Update(chunk);
  if (h_->crc) h_->crc->Update(chunk);
  bytes_ += chunk.size();
}

Status BodyVerifier::Finish(std::string* crc32c_hex) {
  if (checks_.length && bytes_ != *checks_.length) {
    return InvalidArgument("the body has " + std::to_string(bytes_) +
                           " bytes, Content-Length said " + std::to_string(*checks_.length));
  }
  if (h_->md5) {
    Md5Digest d = h_->md5->Final();
    if (Base64Encode(d) != checks_.md5_base64) {
      return InvalidArgument("Content-MD5 does not match the body (got " + Base64Encode(d) + ")");
    }
  }
  if (crc32c_hex != nullptr && h_->crc) *crc32c_hex = Crc32cHex(h_->crc->value());
  if (h_->sha) {
    std::string hex = h_->sha->FinalHex();
    if (!checks_.sha256_hex.empty() && hex != checks_.sha256_hex) {
      return InvalidArgument("the body's sha256 is " + hex + ", x-ferry-sha256 said " +
                             checks_.sha256_hex);
    }
    if (!checks_.sha256_base64.empty() && Base64OfHex(hex) != checks_.sha256_base64) {
      return InvalidArgument("the body's sha-256 does not match the Digest header");
    }
  }
  return Status();
}

Status CopyVerified(server::BodyReader& body, const UploadChecks& checks,
                    const std::function<Status(std::string_view)>& append, uint64_t* bytes,
                    std::string* crc32c_hex) {
  BodyVerifier verify(checks, crc32c_hex != nullptr);
  std::vector<char> buf(kCopyBuffer);
  *bytes = 0;
  while (true) {
    FERRY_ASSIGN_OR_RETURN(size_t n, body.Read(buf.data(), buf.size()));
    if (n == 0) break;
    std::string_view chunk(buf.data(), n);
    verify.Update(chunk);
    FERRY_RETURN_IF_ERROR(append(chunk));
    *bytes += n;
  }
  return verify.Finish(crc32c_hex);
}

void PruneEmptyDirectories(storage::Store& store, std::string_view dir_key,
                           std::string_view stop_key) {
  if (!store.capabilities().local_files) return;
  auto dir = store.LocalPathFor(dir_key);
  auto stop = store.LocalPathFor(stop_key);
  if (!dir || !stop) return;
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<fs::path> dirs;
  for (fs::recursive_directory_iterator it(*dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_directory(ec) && !it->is_symlink(ec)) dirs.push_back(it->path());
  }
  // Deepest first; remove() fails (ignored) on a directory that is not empty.
  std::sort(dirs.begin(), dirs.end(), [](const fs::path& a, const fs::path& b) {
    return a.native().size() > b.native().size();
  });
  for (const fs::path& d : dirs) fs::remove(d, ec);
  fs::path stop_path = fs::path(*stop).lexically_normal();
  for (fs::path p = fs::path(*dir).lexically_normal();
       p != stop_path && p.native().size() > stop_path.native().size(); p = p.parent_path()) {
    if (!fs::remove(p, ec)) break;
  }
}

ArtifactRepo::ArtifactRepo(std::shared_ptr<storage::Store> store, std::string root_key)
    : store_(std::move(store)), root_key_(std::move(root_key)) {
  while (!root_key_.empty() && root_key_.back() == '/') root_key_.pop_back();
}

Result<storage::ObjectInfo> ArtifactRepo::Put(std::string_view path, server::BodyReader& body,
                                              const UploadChecks& checks) {
  FERRY_ASSIGN_OR_RETURN(std::string clean, CleanArtifactPath(path));
  std::string key = JoinKey(root_key_, clean);
  FERRY_ASSIGN_OR_RETURN(auto writer, store_->NewWriter(key, {}));
  uint64_t bytes = 0;
  Status copied = CopyVerified(
      body, checks, [&](std::string_view chunk) { return writer->Append(chunk); }, &bytes);
  if (!copied.ok()) {
    writer->Abort();  // nothing becomes visible
    return Status(copied.code(), "upload of artifact '" + clean + "' failed after " +
                                     std::to_string(bytes) + " bytes: " + copied.message());
  }
  return writer->Commit();
}

Result<std::vector<ArtifactEntry>> ArtifactRepo::List(std::string_view dir) {
  FERRY_ASSIGN_OR_RETURN(std::string clean, CleanArtifactPath(dir, /*allow_empty=*/true));
  std::string prefix = JoinKey(root_key_, clean);
  if (!prefix.empty()) prefix += '/';
  std::vector<ArtifactEntry> out;
  storage::ListOptions options;
  options.prefix = prefix;
  options.recursive = false;
  FERRY_RETURN_IF_ERROR(store_->ListAll(options, [&](const storage::ListPage& page) {
    for (const auto& o : page.objects) {
      std::string name = o.key.substr(prefix.size());
      if (name.empty() || name.find('/') != std::string::npos) continue;
      out.push_back({name, false, o.size});
    }
    for (const auto& p : page.prefixes) {
      std::string name = p.substr(prefix.size());
      if (!name.empty() && name.back() == '/') name.pop_back();
      if (name.empty() || (clean.empty() && name == kUploadsDir)) continue;
      out.push_back({name, true, 0});
    }
    return Status();
  }));
  std::sort(out.begin(), out.end(),
            [](const ArtifactEntry& a, const ArtifactEntry& b) { return a.path < b.path; });
  return out;
}

Status ArtifactRepo::Delete(std::string_view path) {
  FERRY_ASSIGN_OR_RETURN(std::string clean, CleanArtifactPath(path));
  std::string key = JoinKey(root_key_, clean);
  if (store_->IsDirectory(key)) return DeleteTree(clean);
  FERRY_RETURN_IF_ERROR(store_->Delete(key));
  FERRY_RETURN_IF_ERROR(DeleteTree(clean));  // an object store may have both "a" and "a/..."
  size_t slash = key.rfind('/');
  if (slash != std::string::npos) PruneEmptyDirectories(*store_, key.substr(0, slash), root_key_);
  return Status();
}

Status ArtifactRepo::DeleteTree(std::string_view prefix) {
  FERRY_ASSIGN_OR_RETURN(std::string clean, CleanArtifactPath(prefix));
  storage::ListOptions options;
  options.prefix = JoinKey(root_key_, clean) + "/";
  std::vector<std::string> keys;
  FERRY_RETURN_IF_ERROR(store_->ListAll(options, [&](const storage::ListPage& page) {
    for (const auto& o : page.objects) keys.push_back(o.key);
    return Status();
  }));
  constexpr size_t kBatch = 1000;  // S3 DeleteObjects takes at most 1000 keys
  for (size_t i = 0; i < keys.size(); i += kBatch) {
    std::span<const std::string> batch(keys.data() + i, std::min(kBatch, keys.size() - i));
    for (const Status& s : store_->DeleteMany(batch)) FERRY_RETURN_IF_ERROR(s);
  }
  PruneEmptyDirectories(*store_, JoinKey(root_key_, clean), root_key_);
  return Status();
}

}  // namespace ferry::tracker::artifacts
