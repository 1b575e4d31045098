#pragma once
// SingleFlight: when many requests need the same upstream answer at once (64 GPU machines
// starting the same job ask for the same file's metadata), one of them asks and the others wait
// for it, then look in the cache again; they do not share the leader's result object, so a
// failure is not copied to them (each follower asks upstream itself when the cache still has
// nothing). Keys must not contain secrets (hash tokens first).
// Thread-safety: all methods are thread-safe.

#include <chrono>
#include <map>
#include <memory>
#include <string>

#include "base/mutex.h"

namespace ferry::proxy {

class SingleFlight final {
 public:
  class Ticket;

  // Leader: returns at once (ticket.leader() true); its work ends when the ticket is destroyed.
  // Follower: blocks until the leader's ticket is destroyed or `max_wait` passed.
  Ticket Join(const std::string& key, std::chrono::milliseconds max_wait) EXCLUDES(mu_);

 private:
  struct Flight {
    bool done = false;
  };
  void Finish(const std::string& key, const std::shared_ptr<Flight>& flight) EXCLUDES(mu_);

  Mutex mu_;
  CondVar cv_;
  std::map<std::string, std::shared_ptr<Flight>> flights_ GUARDED_BY(mu_);
};

class SingleFlight::Ticket final {
 public:
  Ticket(Ticket&& other) noexcept
      : owner_(other.owner_), key_(std::move(other.key_)), flight_(std::move(other.flight_)) {
    other.owner_ = nullptr;
  }
  Ticket(const Ticket&) = delete;
  Ticket& operator=(const Ticket&) = delete;
  Ticket& operator=(Ticket&&) = delete;
  ~Ticket() {
    if (owner_ && flight_) owner_->Finish(key_, flight_);
  }
  bool leader() const { return owner_ != nullptr; }

 private:
  friend class SingleFlight;
  Ticket(SingleFlight* owner, std::string key, std::shared_ptr<Flight> flight)
      : owner_(owner), key_(std::move(key)), flight_(std::move(flight)) {}
  SingleFlight* owner_;  // set for the leader only
  std::string key_;
  std::shared_ptr<Flight> flight_;
};

}  // namespace ferry::proxy
