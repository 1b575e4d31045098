#include "proxy/service/single_flight.h"

namespace ferry::proxy {

SingleFlight::Ticket SingleFlight::Join(const std::string& key,
                                        std::chrono::milliseconds max_wait) {
  MutexLock lock(mu_);
  auto it = flights_.find(key);
  if (it == flights_.end()) {
    auto flight = std::make_shared<Flight>();
    flights_[key] = flight;
    return Ticket(this, key, flight);
  }
  std::shared_ptr<Flight> flight = it->second;
  cv_.WaitFor(lock, max_wait, [&]() REQUIRES(mu_) { return flight->done; });
  return Ticket(nullptr, key, nullptr);
}

void SingleFlight::Finish(const std::string& key, const std::shared_ptr<Flight>& flight) {
  MutexLock lock(mu_);
  flight->done = true;
  auto it = flights_.find(key);
  if (it != flights_.end() && it->second == flight) flights_.erase(it);
  cv_.NotifyAll();
}

}  // namespace ferry::proxy
