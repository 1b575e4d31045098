#include "base/sha256_lanes.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "base/sha256_ni.h"

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

// Past the lanes' limit: multipart parts, hashed four at a time in SHA-NI streams where the CPU
// has them. Equal sizes (every part but the last), unequal ones (whole blocks in common, then
// each alone), padding edges, and counts that leave groups of 1, 2 and 3.
TEST(Sha256EachTest, LongMessagesInGroupsOfFourGiveTheSameDigests) {
  std::mt19937 rng(11);
  std::string data(3 << 20, '\0');
  for (char& c : data) c = static_cast<char>(rng());
  const size_t part = 1 << 20;
  std::vector<std::vector<size_t>> cases = {
      {part, part, part, part},
      {part, part, part, part, part, part, 12345},
      {part + 55, part + 56, part + 63, part + 64, part + 65},
      {kSha256LaneMaxMessage + 1, 3 * part, part / 2, 70000, 2 * part + 7, part - 1},
      {part}};
  for (const auto& sizes : cases) {
    std::vector<std::string_view> messages;
    for (size_t i = 0; i < sizes.size(); ++i) {
      messages.push_back(std::string_view(data).substr(i * 4099 % 8192, sizes[i]));
    }
    auto digests = Sha256Each(messages);
    ASSERT_EQ(digests.size(), messages.size());
    for (size_t i = 0; i < messages.size(); ++i) {
      EXPECT_EQ(digests[i], Sha256(messages[i])) << "message " << i << " of " << sizes[i];
    }
  }
}

TEST(Sha256NiTest, SameDigestsAsOpenSslWhereTheCpuHasIt) {
  if (!HaveSha256Ni()) GTEST_SKIP() << "no SHA extensions on this CPU";
  std::mt19937 rng(5);
  std::string data(70000, '\0');
  for (char& c : data) c = static_cast<char>(rng());
  std::vector<std::string_view> messages;
  for (size_t size : {0, 1, 55, 56, 63, 64, 65, 119, 120, 128, 1000, 65536, 70000}) {
    messages.push_back(std::string_view(data).substr(0, size));
  }
  std::vector<Sha256Digest> out(messages.size());
  Sha256NiEach(messages, out);
  for (size_t i = 0; i < messages.size(); ++i) {
    EXPECT_EQ(out[i], Sha256(messages[i])) << "size " << messages[i].size();
  }
}

TEST(Sha256EachTest, KnownDigest) {
  std::string_view abc = "abc";
  auto d = Sha256Each(std::span(&abc, 1));
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(d[0], Sha256("abc"));
}

}  // namespace
}  // namespace ferry
