#pragma once
// `ferry serve prewarm`: fills a running `ferry serve`'s cache before the machines need it, by
// downloading through the server what clients would download (so every file is verified and
// published exactly as a client's miss would, and concurrent clients share the fetches):
//  - Hugging Face repos: the repo's file list at a revision (GET /hf/api/{kind}/{repo}/revision/
//    {rev}), then every file through /hf/{repo}/resolve/{rev}/{path};
//  - a pip requirements file: for each project the simple page (/pypi/simple/{name}/, JSON), then
//    every file of the pinned version (newest when unpinned) and its PEP 658 metadata, filtered by
//    `wheel_filters` when given. Dependencies are not resolved: pass a fully pinned file
//    (`pip freeze`, `pip-compile`).
// Bodies are read and discarded; a body shorter than its Content-Length is a failure.

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/status.h"

namespace ferry::proxy::prewarm {

struct PrewarmOptions {
  std::string server;                      // "http://nas:8780"
  std::vector<std::string> hf_repos;       // "org/name", "datasets/org/name", optional "@rev"
  std::string requirements;                // the text of a requirements file ("" = none)
  std::vector<std::string> wheel_filters;  // keep wheels whose name contains one of these (and
                                           // every sdist and -none-any wheel); empty = all files
  std::string hf_token;                    // sent as Authorization: Bearer (gated repos); "" = none
  int parallel = 4;                        // files downloaded at once
  // One line per file done or failed, and per skipped requirement line.
  std::function<void(const std::string&)> progress;
  const std::atomic<bool>* cancel = nullptr;  // stops between files and aborts transfers
};

struct PrewarmReport {
  int files = 0;   // downloaded through the server (hits included)
  int failed = 0;  // failed files and lists (each reported through progress)
  uint64_t bytes = 0;
};

// Runs the prewarm. Errors: kInvalidArgument for a bad server URL or repo spec; failures of
// single files are counted in the report (the rest goes on).
Result<PrewarmReport> Prewarm(const PrewarmOptions& options);

}  // namespace ferry::proxy::prewarm
