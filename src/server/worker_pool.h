#pragma once
// The server's pool for work that may block: handlers and BodySource::Read() pulls. It starts
// a thread whenever a task arrives and no thread is idle (up to `max_threads`), so a handful of
// blocked sources cannot starve the rest: a task waits only when max_threads tasks are running
// at once. Threads are kept until the pool ends (they are cheap next to what they serve).

#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "base/mutex.h"

namespace ferry::server {

class WorkerPool final {
 public:
  explicit WorkerPool(int max_threads);
  ~WorkerPool();  // runs the queued tasks, then joins
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  void Submit(std::function<void()> task) EXCLUDES(mu_);
  int threads() const EXCLUDES(mu_);

 private:
  void Work() EXCLUDES(mu_);
  const size_t max_threads_;
  mutable Mutex mu_;
  CondVar cv_;
  std::deque<std::function<void()>> queue_ GUARDED_BY(mu_);
  size_t idle_ GUARDED_BY(mu_) = 0;
  bool stop_ GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_ GUARDED_BY(mu_);
};

}  // namespace ferry::server
