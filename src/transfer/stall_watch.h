#pragma once
// A copy (or a CLI command) whose backend stops answering says so within seconds instead of
// staying silent until its requests time out and their retries run out (minutes). StallWatch
// polls a progress number (bytes and objects done, bytes printed) from a thread of its own;
// when it has not moved for `after` while work is in flight, it logs one warning naming the
// endpoint(s), the number of things in flight with one of them, and the retries so far, and
// repeats it (with the time waited) every `after` while the stall lasts. One line when work
// moves again.

#include <chrono>
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <thread>

#include "base/mutex.h"

namespace ferry::transfer {

class StallWatch final {
 public:
  // `endpoints`: who is being waited for ("http://127.0.0.1:7480"), asked once, at the first
  // notice (so a copy that never stalls never asks). `retries`: the stores' retry count so far
  // (read on each notice).
  // `progress`: any number that grows while work gets done (read every 250 ms).
  StallWatch(std::function<uint64_t()> progress, std::function<std::string()> endpoints,
             std::function<uint64_t()> retries,
             std::chrono::milliseconds after = std::chrono::seconds(10));
  ~StallWatch();  // stops the thread

  // An object copy starts / ends (`what`: "'SRC' -> 'DST'"). Thread-safe.
  void Begin(const std::string& what);
  void End(const std::string& what);

 private:
  void Loop();
  const std::function<uint64_t()> progress_;
  const std::function<std::string()> endpoints_;
  const std::function<uint64_t()> retries_;
  const std::chrono::milliseconds after_;
  Mutex mu_;
  CondVar cv_;
  bool stop_ GUARDED_BY(mu_) = false;
  std::multiset<std::string> in_flight_ GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace ferry::transfer
