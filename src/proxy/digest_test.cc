#include "proxy/digest.h"

#include <gtest/gtest.h>

namespace ferry::proxy {
namespace {

TEST(DigestTest, ParsesAndPrintsBothAlgorithms) {
  auto d = Digest::FromString("sha256:" + std::string(64, 'A'));
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->algorithm, DigestAlgorithm::kSha256);
  EXPECT_EQ(d->ToString(), "sha256:" + std::string(64, 'a'));
  auto g = Digest::FromString("git-sha1:" + std::string(40, '0'));
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->algorithm, DigestAlgorithm::kGitBlobSha1);
}

TEST(DigestTest, RejectsWrongLengthDigitsAndAlgorithm) {
  EXPECT_EQ(Digest::FromString("sha256:abc").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Digest::FromString("sha256:" + std::string(64, 'g')).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(Digest::FromString("md5:" + std::string(32, '0')).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(Digest::FromString(std::string(64, '0')).status().code(), StatusCode::kInvalidArgument);
}

TEST(DigestTest, Sha256HasherMatchesKnownDigest) {
  BlobHasher h(DigestAlgorithm::kSha256, 3);
  h.Update("a");
  h.Update("bc");
  EXPECT_EQ(h.Finish().hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(DigestTest, GitBlobSha1MatchesGitHashObject) {
  // printf 'hello\n' | git hash-object --stdin
  BlobHasher h(DigestAlgorithm::kGitBlobSha1, 6);
  h.Update("hel");
  h.Update("lo\n");
  EXPECT_EQ(h.Finish().hex, "ce013625030ba8dba906f756967f9e9ca394464a");
  // The empty blob.
  BlobHasher e(DigestAlgorithm::kGitBlobSha1, 0);
  EXPECT_EQ(e.Finish().hex, "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
}

}  // namespace
}  // namespace ferry::proxy
