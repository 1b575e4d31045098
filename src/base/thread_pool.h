#pragma once
// A fixed pool of worker threads running submitted tasks in FIFO order, and a counting
// semaphore over bytes (the copy engine's and the mount's memory budgets).

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
// nothing else is held, so it cannot deadlock). Thread-safe.
class ByteSemaphore final {
 public:
  // Bytes held from a ByteSemaphore, given back when the lease ends (destroyed, assigned to or
  // Reset()). Movable, not copyable; the semaphore must outlive it. An empty lease (default,
  // moved from, or refused by TryAcquireLease) holds nothing and converts to false.
  class Lease final {
   public:
    Lease() = default;
    Lease(Lease&& other) noexcept;
    Lease& operator=(Lease&& other) noexcept;
    ~Lease() { Reset(); }
    explicit operator bool() const { return owner_ != nullptr; }
    uint64_t bytes() const { return bytes_; }
    void Reset();  // gives the bytes back now

   private:
    friend class ByteSemaphore;
    Lease(ByteSemaphore* owner, uint64_t bytes) : owner_(owner), bytes_(bytes) {}
    ByteSemaphore* owner_ = nullptr;
    uint64_t bytes_ = 0;
  };

  explicit ByteSemaphore(uint64_t capacity) : capacity_(capacity) {}
  void Acquire(uint64_t n);
  void Release(uint64_t n);
  // Acquire(n) as a lease.
  [[nodiscard]] Lease AcquireLease(uint64_t n);
  // n units when they fit now, never beyond the capacity (even when nothing is held); an empty
  // lease otherwise. Never blocks.
  [[nodiscard]] Lease TryAcquireLease(uint64_t n);
  uint64_t used() const;
  uint64_t peak() const { return peak_; }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  uint64_t capacity_, used_ = 0, peak_ = 0;
};

}  // namespace ferry
