#pragma once
// The command's output log of `ferry run --track` (artifact ferry/output.log): what the tee
// (job/output_tee.h) copies, kept in a local file so memory stays bounded, up to a size limit.
// Past the limit one line says the log was truncated; the output still reaches the terminal.
//
// Thread-safety: Write (the tee's thread) and Contents (the tracker's thread) may run at once.

#include <cstdint>
#include <string>

#include "base/mutex.h"
#include "base/status.h"
#include "job/output_tee.h"

namespace ferry::job::track {

class OutputLog final : public OutputSink {
 public:
  // Creates (truncates) `path`. Errors name the file.
  static Result<std::unique_ptr<OutputLog>> Create(const std::string& path, uint64_t limit);
  ~OutputLog() override;  // removes the file

  void Write(std::string_view chunk, bool is_stderr) override;

  // The log so far (at most `limit` bytes plus the truncation line).
  Result<std::string> Contents();
  // Bytes written so far (a Contents() is worth uploading only when it changed).
  uint64_t size();

 private:
  OutputLog(std::string path, int fd, uint64_t limit)
      : path_(std::move(path)), fd_(fd), limit_(limit) {}

  const std::string path_;
  Mutex mu_;
  int fd_ GUARDED_BY(mu_);
  const uint64_t limit_;
  uint64_t written_ GUARDED_BY(mu_) = 0;
  bool truncated_ GUARDED_BY(mu_) = false;
};

}  // namespace ferry::job::track
