#include "job/output_tee.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace ferry::job {

namespace {

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Writes all of `data` to `fd`; false once the descriptor is gone (then the caller stops
// writing to it, but keeps draining).
bool WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {
      pollfd p{fd, POLLOUT, 0};
      ::poll(&p, 1, 100);
      continue;
    }
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

void CloseFd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

}  // namespace

Result<std::unique_ptr<OutputTee>> OutputTee::Open(OutputSink& sink, int out_fd, int err_fd) {
  std::unique_ptr<OutputTee> tee(new OutputTee(sink, out_fd, err_fd));
  if (::pipe2(tee->out_pipe_, O_CLOEXEC) != 0 || ::pipe2(tee->err_pipe_, O_CLOEXEC) != 0) {
    return Status(
        StatusCode::kResourceExhausted,
        std::string("cannot capture the command's output: pipe2: ") + std::strerror(errno));
  }
  return tee;
}

OutputTee::~OutputTee() {
  Finish(std::chrono::milliseconds(0));
  CloseFd(out_pipe_[0]);
  CloseFd(out_pipe_[1]);
  CloseFd(err_pipe_[0]);
  CloseFd(err_pipe_[1]);
}

void OutputTee::Start() {
  CloseFd(out_pipe_[1]);
  CloseFd(err_pipe_[1]);
  thread_ = std::thread([this] { Copy(); });
}

void OutputTee::Finish(std::chrono::milliseconds wait) {
  if (!thread_.joinable()) return;
  finish_by_ms_ = NowMs() + wait.count();
  finishing_ = true;
  thread_.join();
}

void OutputTee::Copy() {
  // A write to a closed terminal or pipe must fail with EPIPE, not kill ferry (ferry's main
  // ignores SIGPIPE too; this thread does not rely on it).
  sigset_t pipe_set;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  ::pthread_sigmask(SIG_BLOCK, &pipe_set, nullptr);
  std::vector<char> buf(64 * 1024);
  bool out_ok = true, err_ok = true;  // ferry's own descriptors still take writes
  pollfd fds[2] = {{out_pipe_[0], POLLIN, 0}, {err_pipe_[0], POLLIN, 0}};
  int open = 2;
  while (open > 0) {
    if (finishing_ && NowMs() >= finish_by_ms_) break;
    int r = ::poll(fds, 2, 100);
    if (r < 0 && errno != EINTR) break;
    if (r <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      ssize_t n = ::read(fds[i].fd, buf.data(), buf.size());
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (n <= 0) {  // every writer closed its end
        fds[i].fd = -1;
        --open;
        continue;
      }
      std::string_view chunk(buf.data(), static_cast<size_t>(n));
      bool& ok = i == 0 ? out_ok : err_ok;
      if (ok) ok = WriteAll(i == 0 ? out_fd_ : err_fd_, chunk);
      sink_.Write(chunk, i == 1);
    }
  }
}

}  // namespace ferry::job
