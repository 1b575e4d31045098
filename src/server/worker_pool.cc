#include "server/worker_pool.h"

namespace ferry::server {

WorkerPool::WorkerPool(int max_threads) : max_threads_(max_threads < 1 ? 1 : max_threads) {}

WorkerPool::~WorkerPool() {
  std::vector<std::thread> threads;
  {
    MutexLock lock(mu_);
    stop_ = true;
    threads.swap(threads_);
  }
  cv_.NotifyAll();
  for (auto& t : threads) t.join();
}

void WorkerPool::Submit(std::function<void()> task) {
  MutexLock lock(mu_);
  if (stop_) return;  // the pool is ending: nothing may start now
  queue_.push_back(std::move(task));
  if (queue_.size() > idle_ && threads_.size() < max_threads_) {
    threads_.emplace_back([this] { Work(); });
  } else {
    cv_.NotifyOne();
  }
}

int WorkerPool::threads() const {
  MutexLock lock(mu_);
  return static_cast<int>(threads_.size());
}

void WorkerPool::Work() {
  while (true) {
    std::function<void()> task;
    {
      MutexLock lock(mu_);
      ++idle_;
      cv_.Wait(lock, [this]() REQUIRES(mu_) { return stop_ || !queue_.empty(); });
      --idle_;
      if (queue_.empty()) return;  // stopping and drained
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task();
  }
}

}  // namespace ferry::server
