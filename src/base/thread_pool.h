#pragma once
// A fixed pool of worker threads running submitted tasks in FIFO order, and a counting
// semaphore over bytes (the copy engine's memory budget) whose units are held by RAII leases.

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <thread>
#include <vector>

#include "base/mutex.h"

namespace ferry {

class ThreadPool final {
 public:
  explicit ThreadPool(int threads);
  ~ThreadPool();  // finishes queued tasks, then joins
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  void Submit(std::function<void()> task) EXCLUDES(mu_);
  // Blocks until every task submitted so far has finished.
  void WaitIdle() EXCLUDES(mu_);

 private:
  void Work() EXCLUDES(mu_);
  Mutex mu_;
  CondVar cv_, idle_cv_;
  std::deque<std::function<void()>> queue_ GUARDED_BY(mu_);
  int running_ GUARDED_BY(mu_) = 0;
  bool stop_ GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

// A counting semaphore over bytes (the copy engine's and the mount's memory budgets). Acquire(n)
// blocks until n units are free and returns a Lease that gives them back when it ends, so no
// path can forget to. A request larger than the capacity is granted when nothing else is held,
// so it cannot deadlock. Thread-safe; the semaphore must outlive its leases.
class ByteSemaphore final {
 public:
  class Lease;

  explicit ByteSemaphore(uint64_t capacity) : capacity_(capacity) {}
  ByteSemaphore(const ByteSemaphore&) = delete;
  ByteSemaphore& operator=(const ByteSemaphore&) = delete;

  [[nodiscard]] Lease Acquire(uint64_t n) EXCLUDES(mu_);
  // n units as a Lease if they fit now, never beyond the capacity (even when nothing is held);
  // nullopt otherwise. Never blocks (the mount's read-ahead must not wait for other files).
  [[nodiscard]] std::optional<Lease> TryAcquire(uint64_t n) EXCLUDES(mu_);
  uint64_t used() const EXCLUDES(mu_);
  uint64_t peak() const EXCLUDES(mu_);

 private:
  void Release(uint64_t n) EXCLUDES(mu_);
  mutable Mutex mu_;
  CondVar cv_;
  const uint64_t capacity_;
  uint64_t used_ GUARDED_BY(mu_) = 0;
  uint64_t peak_ GUARDED_BY(mu_) = 0;
};

// Units held from a ByteSemaphore until destroyed or Release()d. Movable, not copyable; a
// moved-from or released lease holds nothing.
class ByteSemaphore::Lease final {
 public:
  Lease() = default;
  Lease(Lease&& other) noexcept { *this = std::move(other); }
  Lease& operator=(Lease&& other) noexcept;
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;
  ~Lease() { Release(); }

  // Gives the units back now (idempotent).
  void Release();
  uint64_t bytes() const { return bytes_; }

 private:
  friend class ByteSemaphore;
  Lease(ByteSemaphore* owner, uint64_t bytes) : owner_(owner), bytes_(bytes) {}
  ByteSemaphore* owner_ = nullptr;
  uint64_t bytes_ = 0;
};

}  // namespace ferry
