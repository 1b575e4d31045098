#include "proxy/service/single_flight.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace ferry::proxy {
namespace {

using namespace std::chrono_literals;

TEST(SingleFlightTest, OneLeaderPerKeyAndFollowersWaitForIt) {
  SingleFlight flights;
  std::atomic<int> leaders{0}, work_done{0}, followers_saw_work{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      auto ticket = flights.Join("k", 10s);
      if (ticket.leader()) {
        ++leaders;
        std::this_thread::sleep_for(100ms);
        ++work_done;
      } else if (work_done == 1) {
        ++followers_saw_work;
      }
    });
    std::this_thread::sleep_for(5ms);
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(leaders, 1);
  EXPECT_EQ(followers_saw_work, 7);
  // Done flights are forgotten: the next caller leads again.
  EXPECT_TRUE(flights.Join("k", 1s).leader());
  EXPECT_TRUE(flights.Join("other", 1s).leader());
}

TEST(SingleFlightTest, FollowersStopWaitingAfterMaxWait) {
  SingleFlight flights;
  auto leader = flights.Join("k", 1s);
  ASSERT_TRUE(leader.leader());
  auto start = std::chrono::steady_clock::now();
  auto follower = flights.Join("k", 50ms);
  EXPECT_FALSE(follower.leader());
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
}

}  // namespace
}  // namespace ferry::proxy
