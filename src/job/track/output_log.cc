#include "job/track/output_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace ferry::job::track {

namespace {

void WriteFully(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // a full disk loses log lines, never the run
    data.remove_prefix(static_cast<size_t>(n));
  }
}

}  // namespace

Result<std::unique_ptr<OutputLog>> OutputLog::Create(const std::string& path, uint64_t limit) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    return Status(StatusCode::kFailedPrecondition,
                  "output log '" + path + "': cannot create it: " + std::strerror(errno));
  }
  return std::unique_ptr<OutputLog>(new OutputLog(path, fd, limit));
}

OutputLog::~OutputLog() {
  MutexLock lock(mu_);
  if (fd_ >= 0) ::close(fd_);
  ::unlink(path_.c_str());
}

void OutputLog::Write(std::string_view chunk, bool /*is_stderr*/) {
  MutexLock lock(mu_);
  if (truncated_ || fd_ < 0) return;
  if (written_ + chunk.size() > limit_) {
    chunk = chunk.substr(0, limit_ - written_);
    truncated_ = true;
  }
  WriteFully(fd_, chunk);
  written_ += chunk.size();
  if (truncated_) {
    WriteFully(fd_, "\n[ferry: output log truncated at " + std::to_string(limit_) +
                        " bytes; the rest went to the terminal only]\n");
  }
}

uint64_t OutputLog::size() {
  MutexLock lock(mu_);
  return written_ + (truncated_ ? 1 : 0);
}

Result<std::string> OutputLog::Contents() {
  MutexLock lock(mu_);  // no half-written chunk in the copy
  std::ifstream in(path_, std::ios::binary);
  if (!in) return Status(StatusCode::kNotFound, "output log '" + path_ + "': cannot read it");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace ferry::job::track
