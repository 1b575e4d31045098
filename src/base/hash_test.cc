#include "base/hash.h"

#include <gtest/gtest.h>

#include "base/strings.h"

namespace ferry {
namespace {

TEST(HashTest, KnownDigests) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(HexEncode(Md5("")), "d41d8cd98f00b204e9800998ecf8427e");
  EXPECT_EQ(Base64Encode(Md5("")), "1B2M2Y8AsgTpgAmY7PhCfg==");
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

}  // namespace
}  // namespace ferry
