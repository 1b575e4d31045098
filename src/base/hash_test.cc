#include "base/hash.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "base/strings.h"

namespace ferry {
namespace {

TEST(HashTest, KnownDigests) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(HexEncode(Md5("")), "d41d8cd98f00b204e9800998ecf8427e");
  EXPECT_EQ(Base64Encode(Md5("")), "1B2M2Y8AsgTpgAmY7PhCfg==");
}

TEST(HashTest, Base64DecodeIsStrictAndRoundTrips) {
  EXPECT_EQ(Base64Decode("dXNlcjpzM2NyZXQ="), "user:s3cret");
  EXPECT_EQ(Base64Decode("YQ=="), "a");
  EXPECT_EQ(Base64Decode("YWI="), "ab");
  EXPECT_EQ(Base64Decode("YWJj"), "abc");
  EXPECT_EQ(Base64Decode(""), "");
  for (std::string_view bad : {"YQ=", "Y Q==", "YQ-=", "====", "YQ==YQ==", "*A=="}) {
    EXPECT_EQ(Base64Decode(bad), std::nullopt) << bad;
  }
  std::string all;
  for (int i = 0; i < 256; ++i) all.push_back(static_cast<char>(i));
  EXPECT_EQ(Base64Decode(Base64Encode(AsBytes(all))), all);
}

TEST(HashTest, HashStreamSha1AndSha256InPieces) {
  HashStream sha1(HashStream::Kind::kSha1);
  sha1.Update("a");
  sha1.Update("bc");
  EXPECT_EQ(sha1.FinalHex(), "a9993e364706816aba3e25717850c26c9cd0d89d");
  HashStream sha256(HashStream::Kind::kSha256);
  sha256.Update("ab");
  sha256.Update("c");
  EXPECT_EQ(sha256.FinalHex(), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(HashTest, StreamingMd5MatchesOneShot) {
  Md5Stream m;
  m.Update("hello ");
  m.Update("world");
  EXPECT_EQ(HexEncode(m.Final()), HexEncode(Md5("hello world")));
}

TEST(HashTest, HmacMatchesRfc4231Case2) {
  auto mac = HmacSha256(AsBytes("Jefe"), "what do ya want for nothing?");
  EXPECT_EQ(HexEncode(mac), "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST(HashTest, HmacMatchesRfc4231Cases1And6) {
  // Case 1: a 20-byte key; case 6: a 131-byte key, longer than the block (hashed first).
  std::string key1(20, '\x0b');
  EXPECT_EQ(HexEncode(HmacSha256(AsBytes(key1), "Hi There")),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  std::string key6(131, '\xaa');
  EXPECT_EQ(HexEncode(HmacSha256(AsBytes(key6),
                                 "Test Using Larger Than Block-Size Key - Hash Key First")),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

TEST(HashTest, DigestsAgreeAcrossThreadsThatEachReuseAContext) {
  // Each thread reuses its own context; interleaved one-shot digests must not disturb it.
  std::string expect = Sha256Hex("abc");
  EXPECT_EQ(expect, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 500; ++i) {
        HashStream stream(HashStream::Kind::kSha256);
        stream.Update("a");
        if (Sha256Hex("abc") != expect) ++wrong;
        (void)HmacSha256(AsBytes("k"), "x");
        (void)Md5("m");
        stream.Update("bc");
        if (stream.FinalHex() != expect) ++wrong;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
}  // namespace ferry
