#pragma once
// A mutex and its scoped lock with clang's thread-safety annotations, so the compiler checks
// that every member marked GUARDED_BY(mu_) is only touched with mu_ held (the `clang` preset
// builds with -Wthread-safety; LevelDB's port::Mutex and Abseil's Mutex do the same).
// std::mutex cannot be used for this: libstdc++ does not annotate it.
//
//   Mutex mu_;
//   int count_ GUARDED_BY(mu_) = 0;
//   void Add() EXCLUDES(mu_) { MutexLock lock(mu_); ++count_; }
//   void AddLocked() REQUIRES(mu_) { ++count_; }
//
// Waiting: CondVar works on a held MutexLock; the predicate runs with the mutex held (annotate
// the lambda REQUIRES(mu_) when it reads guarded members).

#include <condition_variable>
#include <mutex>

#include "base/thread_annotations.h"

namespace ferry {

class CAPABILITY("mutex") Mutex final {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void lock() ACQUIRE() { mu_.lock(); }
  void unlock() RELEASE() { mu_.unlock(); }
  bool try_lock() TRY_ACQUIRE(true) { return mu_.try_lock(); }
  // For code that must state the lock is held where the analysis cannot see it.
  void AssertHeld() const ASSERT_CAPABILITY(this) {}

 private:
  friend class CondVar;
  std::mutex mu_;
};

// Holds a Mutex for its scope.
class SCOPED_CAPABILITY MutexLock final {
 public:
  explicit MutexLock(Mutex& mu) ACQUIRE(mu) : mu_(mu) { mu_.lock(); }
  ~MutexLock() RELEASE() { mu_.unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  friend class CondVar;
  Mutex& mu_;
};

// A condition variable for Mutex: Wait() releases the lock while blocked and holds it again
// when it returns (as std::condition_variable does with a std::unique_lock).
class CondVar final {
 public:
  template <typename Predicate>
  void Wait(MutexLock& lock, Predicate ready) {
    std::unique_lock<std::mutex> native(lock.mu_.mu_, std::adopt_lock);
    cv_.wait(native, ready);
    native.release();
  }
  // Returns ready() (false: timed out with the predicate still false).
  template <typename Rep, typename Period, typename Predicate>
  bool WaitFor(MutexLock& lock, const std::chrono::duration<Rep, Period>& timeout,
               Predicate ready) {
    std::unique_lock<std::mutex> native(lock.mu_.mu_, std::adopt_lock);
    bool ok = cv_.wait_for(native, timeout, ready);
    native.release();
    return ok;
  }
  void NotifyOne() { cv_.notify_one(); }
  void NotifyAll() { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

}  // namespace ferry
