#include "base/sha256_lanes.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace ferry {
namespace {

TEST(Sha256EachTest, SameDigestsAsOneByOneForEverySizeAndCount) {
  std::mt19937 rng(7);
  std::string data(3 * kSha256LaneMaxMessage + 100, '\0');
  for (char& c : data) c = static_cast<char>(rng());
  // Sizes around SHA-256's 64-byte blocks and its 55/56-byte padding edge, the lanes' limit,
  // and one past it (hashed by OpenSSL); more messages than the 16 lanes.
  std::vector<size_t> sizes = {0,
                               1,
                               55,
                               56,
                               63,
                               64,
                               65,
                               1000,
                               4096,
                               kSha256LaneMaxMessage - 1,
                               kSha256LaneMaxMessage,
                               kSha256LaneMaxMessage + 1};
  for (int i = 0; i < 40; ++i) sizes.push_back(rng() % kSha256LaneMaxMessage);
  std::vector<std::string_view> messages;
  for (size_t i = 0; i < sizes.size(); ++i) {
    messages.push_back(std::string_view(data).substr(i * 997 % 1000, sizes[i]));
  }
  auto digests = Sha256Each(messages);
  ASSERT_EQ(digests.size(), messages.size());
  for (size_t i = 0; i < messages.size(); ++i) {
    EXPECT_EQ(digests[i], Sha256(messages[i])) << "message " << i << " of " << sizes[i];
  }
  EXPECT_TRUE(Sha256Each({}).empty());
}

TEST(Sha256EachTest, KnownDigest) {
  std::string_view abc = "abc";
  auto d = Sha256Each(std::span(&abc, 1));
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(d[0], Sha256("abc"));
}

}  // namespace
}  // namespace ferry
