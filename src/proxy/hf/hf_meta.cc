#include "proxy/hf/hf_meta.h"

#include "base/strings.h"
#include "proxy/hf/hf_paths.h"

namespace ferry::proxy::hf {

std::string BareEtag(std::string_view value) {
  value = Trim(value);
  if (value.starts_with("W/")) value.remove_prefix(2);
  if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
    value = value.substr(1, value.size() - 2);
  }
  return std::string(value);
}

Result<FileMeta> MetaFromResolveAnswer(const http::Response& response, std::string_view url) {
  auto bad = [&](const std::string& why) {
    return Status(StatusCode::kUnavailable,
                  "resolve '" + http::DisplayUrl(url) + "': upstream answer " + why,
                  ErrorDetail{.http_status = static_cast<int>(response.status)});
  };
  FileMeta m;
  auto commit = response.Header("x-repo-commit");
  if (!commit || !IsCommitId(Trim(*commit))) return bad("has no X-Repo-Commit commit id");
  m.commit = std::string(Trim(*commit));
  auto linked_etag = response.Header("x-linked-etag");
  auto etag = response.Header("etag");
  if (linked_etag) {
    m.lfs = true;
    m.etag = BareEtag(*linked_etag);
  } else if (etag) {
    m.etag = BareEtag(*etag);
  } else {
    return bad("has no ETag");
  }
  auto size_text = m.lfs ? response.Header("x-linked-size") : response.Header("content-length");
  if (!size_text) size_text = response.Header("content-length");
  auto size = size_text ? ParseUint64(Trim(*size_text)) : std::nullopt;
  if (!size) return bad("has no file size");
  m.size = *size;
  auto digest = m.etag.size() == 64 ? Digest::Parse(DigestAlgorithm::kSha256, m.etag)
                                    : Digest::Parse(DigestAlgorithm::kGitBlobSha1, m.etag);
  if (!digest.ok()) return bad("has an ETag that is not a content hash ('" + m.etag + "')");
  m.digest = *digest;
  return m;
}

server::Headers ClientHeaders(const FileMeta& meta) {
  server::Headers h;
  h.Add("X-Repo-Commit", meta.commit);
  h.Add("ETag", "\"" + meta.etag + "\"");
  if (meta.lfs) {
    h.Add("X-Linked-Etag", "\"" + meta.etag + "\"");
    h.Add("X-Linked-Size", std::to_string(meta.size));
  }
  h.Add("Content-Type", "application/octet-stream");
  return h;
}

std::map<std::string, std::string> MetaToFields(const FileMeta& meta) {
  return {{"commit", meta.commit},
          {"etag", meta.etag},
          {"lfs", meta.lfs ? "1" : "0"},
          {"size", std::to_string(meta.size)},
          {"digest", meta.digest.ToString()}};
}

std::optional<FileMeta> MetaFromFields(const std::map<std::string, std::string>& f) {
  auto get = [&](const char* k) -> const std::string* {
    auto it = f.find(k);
    return it == f.end() ? nullptr : &it->second;
  };
  const std::string *commit = get("commit"), *etag = get("etag"), *lfs = get("lfs"),
                    *size = get("size"), *digest = get("digest");
  if (!commit || !etag || !lfs || !size || !digest) return std::nullopt;
  auto n = ParseUint64(*size);
  auto d = Digest::FromString(*digest);
  if (!n || !d.ok() || !IsCommitId(*commit)) return std::nullopt;
  return FileMeta{.commit = *commit, .etag = *etag, .lfs = *lfs == "1", .size = *n, .digest = *d};
}

}  // namespace ferry::proxy::hf
