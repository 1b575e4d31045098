#include "base/thread_pool.h"

#include <algorithm>
#include <utility>

namespace ferry {

ThreadPool::ThreadPool(int threads) {
  for (int i = 0; i < std::max(1, threads); ++i) threads_.emplace_back([this] { Work(); });
}

ThreadPool::~ThreadPool() {
  {
    MutexLock lock(mu_);
    stop_ = true;
  }
  cv_.NotifyAll();
  for (auto& t : threads_) t.join();
}

void ThreadPool::Submit(std::function<void()> task) {
  {
    MutexLock lock(mu_);
    queue_.push_back(std::move(task));
  }
  cv_.NotifyOne();
}

void ThreadPool::WaitIdle() {
  MutexLock lock(mu_);
  idle_cv_.Wait(lock, [&]() REQUIRES(mu_) { return queue_.empty() && running_ == 0; });
}

void ThreadPool::Work() {
  while (true) {
    std::function<void()> task;
    {
      MutexLock lock(mu_);
      cv_.Wait(lock, [&]() REQUIRES(mu_) { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stop_ and drained
      task = std::move(queue_.front());
      queue_.pop_front();
      ++running_;
    }
    task();
    {
      MutexLock lock(mu_);
      --running_;
      if (queue_.empty() && running_ == 0) idle_cv_.NotifyAll();
    }
  }
}

ByteSemaphore::Lease ByteSemaphore::Acquire(uint64_t n) {
  MutexLock lock(mu_);
  cv_.Wait(lock, [&]() REQUIRES(mu_) { return used_ + n <= capacity_ || used_ == 0; });
  used_ += n;
  peak_ = std::max(peak_, used_);
  return Lease(this, n);
}

std::optional<ByteSemaphore::Lease> ByteSemaphore::TryAcquire(uint64_t n) {
  MutexLock lock(mu_);
  if (n > capacity_ || used_ > capacity_ - n) return std::nullopt;
  used_ += n;
  peak_ = std::max(peak_, used_);
  return Lease(this, n);
}

uint64_t ByteSemaphore::used() const {
  MutexLock lock(mu_);
  return used_;
}

uint64_t ByteSemaphore::peak() const {
  MutexLock lock(mu_);
  return peak_;
}

void ByteSemaphore::Release(uint64_t n) {
  {
    MutexLock lock(mu_);
    used_ -= std::min(used_, n);
  }
  cv_.NotifyAll();
}

ByteSemaphore::Lease& ByteSemaphore::Lease::operator=(Lease&& other) noexcept {
  if (this != &other) {
    Release();
    owner_ = std::exchange(other.owner_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void ByteSemaphore::Lease::Release() {
  if (owner_ != nullptr) owner_->Release(bytes_);
  owner_ = nullptr;
  bytes_ = 0;
}

}  // namespace ferry
