#include "proxy/pypi/proxy_urls.h"

#include "base/strings.h"
#include "proxy/pypi/names.h"
#include "proxy/pypi/url.h"

namespace ferry::proxy::pypi {
namespace {

constexpr std::string_view kMetadataSuffix = ".metadata";

bool IsLowerHex64(std::string_view s) {
  if (s.size() != 64) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

std::optional<UpstreamFile> Match(const DistFile& f, const FileRequest& req, bool metadata) {
  if (f.Sha256() != req.sha256) return std::nullopt;
  UpstreamFile up;
  up.file = &f;
  up.metadata = metadata;
  if (!metadata) {
    up.url = f.url;
    up.expected_sha256 = f.Sha256();
    return up;
  }
  if (!f.core_metadata.available) return std::nullopt;
  up.url = f.url + std::string(kMetadataSuffix);
  auto it = f.core_metadata.hashes.find("sha256");
  if (it != f.core_metadata.hashes.end()) up.expected_sha256 = it->second;
  return up;
}

}  // namespace

std::string ProxyFileUrl(std::string_view files_root, std::string_view project,
                         const DistFile& file) {
  std::string url(files_root);
  url.append(project);
  const std::string& sha = file.Sha256();
  if (sha.empty()) {
    url.append("/nohash/");
  } else {
    url.append("/sha256/");
    url.append(sha);
    url.push_back('/');
  }
  // Percent-encode the name unless it is all unreserved characters (the usual case).
  bool plain = true;
  for (char c : file.filename) {
    plain = plain && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '_' || c == '.' || c == '~');
  }
  url.append(plain ? file.filename : PercentEncode(file.filename));
  return url;
}

ProjectPage RewriteForProxy(ProjectPage page, std::string_view files_root,
                            std::string_view project) {
  for (DistFile& f : page.files) f.url = ProxyFileUrl(files_root, project, f);
  return page;
}

std::optional<FileRequest> ParseFilePath(std::string_view path) {
  std::vector<std::string_view> parts = Split(path, '/');
  FileRequest req;
  std::string_view encoded_name;
  if (parts.size() == 4 && parts[1] == "sha256" && IsLowerHex64(parts[2])) {
    req.sha256 = std::string(parts[2]);
    encoded_name = parts[3];
  } else if (parts.size() == 3 && parts[1] == "nohash") {
    encoded_name = parts[2];
  } else {
    return std::nullopt;
  }
  if (!IsValidProjectName(parts[0]) || NormalizeName(parts[0]) != parts[0]) return std::nullopt;
  req.project = std::string(parts[0]);
  auto name = PercentDecode(encoded_name);
  if (!name || !IsSafeFilename(*name)) return std::nullopt;
  req.filename = std::move(*name);
  return req;
}

std::optional<UpstreamFile> FindUpstreamFile(const ProjectPage& page, const FileRequest& req) {
  // An exact name first: a distribution could itself end in ".metadata".
  for (const DistFile& f : page.files) {
    if (f.filename == req.filename) {
      if (auto up = Match(f, req, false)) return up;
    }
  }
  if (!EndsWith(req.filename, kMetadataSuffix)) return std::nullopt;
  std::string_view dist =
      std::string_view(req.filename).substr(0, req.filename.size() - kMetadataSuffix.size());
  for (const DistFile& f : page.files) {
    if (f.filename == dist) {
      if (auto up = Match(f, req, true)) return up;
    }
  }
  return std::nullopt;
}

}  // namespace ferry::proxy::pypi
