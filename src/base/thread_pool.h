#pragma once
// A fixed pool of worker threads running submitted tasks in FIFO order, and a counting
// semaphore over bytes (the copy engine's memory budget).

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ferry {

class ThreadPool final {
 public:
  explicit ThreadPool(int threads);
  ~ThreadPool();  // finishes queued tasks, then joins
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  void Submit(std::function<void()> task);
  // Blocks until every task submitted so far has finished.
  void WaitIdle();

 private:
  void Work();
  std::mutex mu_;
  std::condition_variable cv_, idle_cv_;
  std::deque<std::function<void()>> queue_;
  int running_ = 0;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

// Acquire(n) blocks until n units are free (a request larger than the capacity is granted when
// nothing else is held, so it cannot deadlock).
class ByteSemaphore final {
 public:
  explicit ByteSemaphore(uint64_t capacity) : capacity_(capacity) {}
  void Acquire(uint64_t n);
  void Release(uint64_t n);
  uint64_t peak() const { return peak_; }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t capacity_, used_ = 0, peak_ = 0;
};

}  // namespace ferry
