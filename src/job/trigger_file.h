#pragma once
// The trigger file of `ferry run` (docs/semantics/run.md, "On-demand syncs"): creating it asks
// for a sync of every output now. When that sync has finished and its manifest is written, ferry
// removes it, so the command can wait for it to vanish; when the sync failed or skipped files,
// `<trigger>.failed` holds the one-line error as well, until the next request.
//
// Not thread-safe; the lifecycle's thread owns it.

#include <string>

#include "base/status.h"

namespace ferry::job {

class TriggerFile final {
 public:
  explicit TriggerFile(std::string path) : path_(std::move(path)) {}

  const std::string& path() const { return path_; }
  std::string failed_path() const { return path_ + ".failed"; }

  // Removes a request left by an earlier run: it is not one of this run's.
  void RemoveStale() const;
  // Whether a request is waiting.
  bool Requested() const;
  // A request is being served: the answer to the previous one (`.failed`) no longer applies.
  void ClearFailed() const;
  // Answers the request with the sync that served it: `.failed` holds its error, or is gone
  // when it succeeded; then the request itself is removed (last: a waiter sees it vanish only
  // once `.failed` says how it went).
  void Answer(const Status& synced) const;

 private:
  std::string path_;
};

}  // namespace ferry::job
