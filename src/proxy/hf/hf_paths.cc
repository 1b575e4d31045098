#include "proxy/hf/hf_paths.h"

#include <vector>

namespace ferry::proxy::hf {

namespace {

std::vector<std::string_view> Split(std::string_view s) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    size_t slash = s.find('/', start);
    out.push_back(s.substr(start, slash == std::string_view::npos ? slash : slash - start));
    if (slash == std::string_view::npos) return out;
    start = slash + 1;
  }
}

bool IsNamePart(std::string_view part) {
  if (part.empty() || part.size() > 96 || part.front() == '.') return false;
  for (char c : part) {
    bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
    if (!ok) return false;
  }
  return true;
}

bool IsSafeSegment(std::string_view seg) {
  if (seg.empty() || seg == "." || seg == "..") return false;
  for (unsigned char c : seg) {
    if (c < 0x20 || c == 0x7f || c == '\\') return false;
  }
  return true;
}

// Reads an optional type prefix; returns the index of the first repo segment.
size_t ReadType(const std::vector<std::string_view>& seg, RepoType* type) {
  if (seg.empty()) return 0;
  if (seg[0] == "datasets") return *type = RepoType::kDataset, 1;
  if (seg[0] == "spaces") return *type = RepoType::kSpace, 1;
  if (seg[0] == "models") return *type = RepoType::kModel, 1;
  *type = RepoType::kModel;
  return 0;
}

std::optional<RepoType> ApiKindType(std::string_view kind) {
  if (kind == "models") return RepoType::kModel;
  if (kind == "datasets") return RepoType::kDataset;
  if (kind == "spaces") return RepoType::kSpace;
  return std::nullopt;
}

}  // namespace

std::string RepoRef::ResolvePrefix() const {
  switch (type) {
    case RepoType::kDataset:
      return "datasets/";
    case RepoType::kSpace:
      return "spaces/";
    case RepoType::kModel:
      return "";
  }
  return "";
}

std::string RepoRef::ApiKind() const {
  switch (type) {
    case RepoType::kDataset:
      return "datasets";
    case RepoType::kSpace:
      return "spaces";
    case RepoType::kModel:
      return "models";
  }
  return "models";
}

bool IsValidRepoId(std::string_view id) {
  auto parts = Split(id);
  if (parts.size() > 2) return false;
  for (auto p : parts) {
    if (!IsNamePart(p)) return false;
  }
  return true;
}

bool IsCommitId(std::string_view revision) {
  if (revision.size() != 40) return false;
  for (char c : revision) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

std::optional<ResolvePath> ParseResolvePath(std::string_view rest) {
  auto seg = Split(rest);
  ResolvePath out;
  size_t i = ReadType(seg, &out.repo.type);
  // {repo} is one or two segments: find "resolve" right after it.
  size_t r = 0;
  if (seg.size() > i + 1 && seg[i + 1] == "resolve") {
    r = i + 1;
  } else if (seg.size() > i + 2 && seg[i + 2] == "resolve") {
    r = i + 2;
  } else {
    return std::nullopt;
  }
  std::string id(seg[i]);
  if (r == i + 2) id += "/" + std::string(seg[i + 1]);
  if (!IsValidRepoId(id) || seg.size() < r + 3) return std::nullopt;
  out.repo.id = std::move(id);
  if (!IsSafeSegment(seg[r + 1])) return std::nullopt;
  out.revision = std::string(seg[r + 1]);
  for (size_t k = r + 2; k < seg.size(); ++k) {
    if (!IsSafeSegment(seg[k])) return std::nullopt;
    if (!out.path.empty()) out.path += '/';
    out.path += seg[k];
  }
  return out;
}

namespace {
bool IsXetTokenWord(std::string_view w) { return w == "xet-read-token" || w == "xet-write-token"; }
}  // namespace

std::optional<ApiPath> ParseApiPath(std::string_view rest) {
  auto seg = Split(rest);
  if (seg.size() < 2) return std::nullopt;
  auto type = ApiKindType(seg[0]);
  if (!type) return std::nullopt;
  ApiPath out;
  out.repo.type = *type;
  // The repo is "org/name" unless the segment after the first part is an endpoint word and
  // the one after "org/name" is not (a legacy one-part id such as "gpt2").
  auto is_word = [](std::string_view w) {
    return w == "revision" || w == "tree" || w == "paths-info" || IsXetTokenWord(w);
  };
  size_t n = 2;
  if (seg.size() == 2) {
    n = 1;
  } else if (is_word(seg[2]) && !(seg.size() > 3 && is_word(seg[3]))) {
    n = 1;
  }
  std::string id(seg[1]);
  if (n == 2) id += "/" + std::string(seg[2]);
  if (!IsValidRepoId(id)) return std::nullopt;
  out.repo.id = std::move(id);
  size_t t = 1 + n;
  if (t == seg.size()) return out;
  std::string_view word = seg[t];
  if (IsXetTokenWord(word) && seg.size() <= t + 2) {
    // Answered by the proxy itself (hf_xet.h); the revision is optional (buckets send none).
    out.tail = std::string(word);
    if (seg.size() == t + 2 && IsSafeSegment(seg[t + 1])) {
      out.revision = std::string(seg[t + 1]);
      out.tail += "/" + out.revision;
    }
    return out;
  }
  if (!is_word(word) || seg.size() < t + 2 || !IsSafeSegment(seg[t + 1])) return std::nullopt;
  if ((word == "revision" || word == "paths-info") && seg.size() != t + 2) return std::nullopt;
  out.revision = std::string(seg[t + 1]);
  for (size_t k = t; k < seg.size(); ++k) {
    if (k > t + 1 && !IsSafeSegment(seg[k])) return std::nullopt;
    if (!out.tail.empty()) out.tail += '/';
    out.tail += seg[k];
  }
  return out;
}

}  // namespace ferry::proxy::hf
