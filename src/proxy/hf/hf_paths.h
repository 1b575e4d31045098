#pragma once
// The Hub's URL shapes as the proxy receives them below /hf (docs/semantics/hf.md):
//   [models/|datasets/|spaces/]{repo}/resolve/{revision}/{path}       a file
//   api/{models|datasets|spaces}/{repo}[/...]                           the JSON API
// {repo} is "name" or "org/name". Pure functions, no I/O.

#include <optional>
#include <string>
#include <string_view>

namespace ferry::proxy::hf {

enum class RepoType { kModel, kDataset, kSpace };

struct RepoRef {
  RepoType type = RepoType::kModel;
  std::string id;  // "org/name" or "name"

  // "" for models, "datasets/" or "spaces/": how resolve URLs start on the Hub.
  std::string ResolvePrefix() const;
  // "models", "datasets" or "spaces": the API's word.
  std::string ApiKind() const;
  // "models/org/name": a stable key for caches and messages.
  std::string Key() const { return ApiKind() + "/" + id; }
};

struct ResolvePath {
  RepoRef repo;
  std::string revision;  // a branch, tag or commit id
  std::string path;      // the file's path in the repo, '/'-separated, not empty
};

// Parses the decoded path after "/hf/". nullopt when it is not a resolve URL or a part is not
// acceptable: repo names of letters, digits, '-', '_', '.' (no "." or ".." and not starting
// with '.'), a revision without '/', a file path without empty, "." or ".." segments.
std::optional<ResolvePath> ParseResolvePath(std::string_view rest);

struct ApiPath {
  RepoRef repo;
  std::string tail;  // after the repo: "", "revision/main", "tree/main/dir", "paths-info/abc"
  // The revision the answer depends on, when the tail names one ("" otherwise: the default
  // branch).
  std::string revision;
};

// Parses the decoded path after "/hf/api/" for the repo endpoints the proxy passes through:
// "{kind}/{repo}", "{kind}/{repo}/revision/{rev}", "{kind}/{repo}/tree/{rev}[/{path}]",
// "{kind}/{repo}/paths-info/{rev}", and the Xet token requests the proxy refuses itself,
// "{kind}/{repo}/xet-{read|write}-token[/{rev}]" (hf_xet.h). nullopt otherwise (404).
std::optional<ApiPath> ParseApiPath(std::string_view rest);

// True for a full commit id (40 lower-case hex digits): answers for it never change.
bool IsCommitId(std::string_view revision);

// The repo name rules above.
bool IsValidRepoId(std::string_view id);

}  // namespace ferry::proxy::hf
