#pragma once
// `ferry run --track`: the command's stdout and stderr pass through ferry (two pipes) so a copy
// can be kept (the run's output log) while they still reach ferry's own stdout and stderr, each
// to its own, in the order written. The command's stdout is then a pipe, not a terminal
// (docs/semantics/run.md, "--track").
//
// One thread copies: poll on both pipes, read at most 64 KiB, write it to ferry's descriptor,
// hand it to the sink. Memory is that one buffer. The command never waits on the sink; it waits
// on ferry's stdout exactly as it would without the tee. When ferry's stdout is gone (EPIPE, a
// closed terminal), the pipes are still drained (and the sink fed), so the command never blocks.
//
// Thread-safety: Open, Start and Finish from one thread; the sink is called on the tee's thread.

#include <atomic>
#include <chrono>
#include <memory>
#include <string_view>
#include <thread>

#include "base/status.h"

namespace ferry::job {

class OutputSink {
 public:
  virtual ~OutputSink() = default;
  // A chunk of the command's output; `is_stderr` says which stream. Called on the tee's thread.
  virtual void Write(std::string_view chunk, bool is_stderr) = 0;
};

class OutputTee final {
 public:
  // Two close-on-exec pipes; `out_fd`/`err_fd` are where the output goes on (ferry's own by
  // default). Errors name the system call.
  static Result<std::unique_ptr<OutputTee>> Open(OutputSink& sink, int out_fd = 1, int err_fd = 2);
  ~OutputTee();  // Finish(0)
  OutputTee(const OutputTee&) = delete;
  OutputTee& operator=(const OutputTee&) = delete;

  // The pipes' write ends: the child dup2()s them onto 1 and 2 (async-signal-safe).
  int child_stdout() const { return out_pipe_[1]; }
  int child_stderr() const { return err_pipe_[1]; }

  // In the parent after the fork: closes the write ends and starts copying.
  void Start();
  // Copies until every writer has closed its ends (the command and whatever it started) or
  // `wait` has passed, then stops. Idempotent.
  void Finish(std::chrono::milliseconds wait);

 private:
  OutputTee(OutputSink& sink, int out_fd, int err_fd)
      : sink_(sink), out_fd_(out_fd), err_fd_(err_fd) {}
  void Copy();

  OutputSink& sink_;
  int out_fd_, err_fd_;
  int out_pipe_[2] = {-1, -1};
  int err_pipe_[2] = {-1, -1};
  std::atomic<bool> finishing_{false};
  std::atomic<int64_t> finish_by_ms_{0};  // steady clock, once finishing
  std::thread thread_;
};

}  // namespace ferry::job
