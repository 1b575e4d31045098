// SigV4 against AWS's published examples: the S3 "Signature Calculations for the Authorization
// Header" examples (examplebucket, 20130524) and the presigned-URL example, plus the generic
// SigV4 test suite's get-vanilla case.
#include "aws/sigv4.h"

#include <gtest/gtest.h>

#include <vector>

#include "base/hash.h"

namespace ferry::aws {
namespace {

const Credentials kS3ExampleCreds{.access_key_id = "AKIAIOSFODNN7EXAMPLE",
                                  .secret_access_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"};

SystemTime Time(const char* iso) { return *ParseIso8601(iso); }

// The S3 example's GET of /test.txt, bytes 0-9.
SigningInput GetObjectWithRange() {
  return {.method = "GET",
          .encoded_path = "/test.txt",
          .headers = {{"Host", "examplebucket.s3.amazonaws.com"},
                      {"Range", "bytes=0-9"},
                      {"x-amz-content-sha256", std::string(kEmptyPayloadSha256)},
                      {"x-amz-date", "20130524T000000Z"}},
          .payload_hash = std::string(kEmptyPayloadSha256)};
}

TEST(SigV4Test, S3GetObjectWithRange) {
  SigningInput in = GetObjectWithRange();
  auto r = SignV4(in, kS3ExampleCreds, "us-east-1", "s3", Time("2013-05-24T00:00:00Z"));
  EXPECT_EQ(
      r.canonical_request,
      "GET\n/test.txt\n\nhost:examplebucket.s3.amazonaws.com\nrange:bytes=0-9\n"
      "x-amz-content-sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n"
      "x-amz-date:20130524T000000Z\n\nhost;range;x-amz-content-sha256;x-amz-date\n"
      "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(r.string_to_sign,
            "AWS4-HMAC-SHA256\n20130524T000000Z\n20130524/us-east-1/s3/aws4_request\n"
            "7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972");
  EXPECT_EQ(r.signature, "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
  EXPECT_EQ(r.authorization,
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
            "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,"
            "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
}

TEST(SigV4Test, S3PutObjectWithPayloadAndEncodedKey) {
  std::string body = "Welcome to Amazon S3.";
  std::string hash = Sha256Hex(body);
  EXPECT_EQ(hash, "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072");
  SigningInput in{.method = "PUT",
                  .encoded_path = "/test%24file.text",
                  .headers = {{"Host", "examplebucket.s3.amazonaws.com"},
                              {"Date", "Fri, 24 May 2013 00:00:00 GMT"},
                              {"x-amz-date", "20130524T000000Z"},
                              {"x-amz-storage-class", "REDUCED_REDUNDANCY"},
                              {"x-amz-content-sha256", hash}},
                  .payload_hash = hash};
  auto r = SignV4(in, kS3ExampleCreds, "us-east-1", "s3", Time("2013-05-24T00:00:00Z"));
  EXPECT_EQ(r.signed_headers, "date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class");
  EXPECT_EQ(r.signature, "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd");
}

// The signing key is kept per thread between requests: a change of secret, day, region or
// service must derive a new one, and coming back must give the published signature again.
TEST(SigV4Test, KeptSigningKeyFollowsSecretDayRegionAndService) {
  SigningInput in = GetObjectWithRange();
  const std::string published = "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41";
  const SystemTime day = Time("2013-05-24T00:00:00Z");
  Credentials other = kS3ExampleCreds;
  other.secret_access_key.back() = 'X';
  std::vector<SigningResult> variants = {
      SignV4(in, other, "us-east-1", "s3", day),
      SignV4(in, kS3ExampleCreds, "us-east-1", "s3", Time("2013-05-25T00:00:00Z")),
      SignV4(in, kS3ExampleCreds, "eu-west-1", "s3", day),
      SignV4(in, kS3ExampleCreds, "us-east-1", "sts", day)};
  for (const auto& v : variants) {
    EXPECT_NE(v.signature, published);
    EXPECT_EQ(SignV4(in, kS3ExampleCreds, "us-east-1", "s3", day).signature, published);
  }
  EXPECT_EQ(SignV4(in, other, "us-east-1", "s3", day).signature, variants[0].signature);
}

TEST(SigV4Test, S3ChunkedUploadSeedAndChunkSignatures) {
  // AWS's streaming example: 66,560 bytes of 'a' in chunks of 65,536 and 1,024, then the empty
  // final chunk, each signed with the previous signature.
  SigningInput in{.method = "PUT",
                  .encoded_path = "/examplebucket/chunkObject.txt",
                  .headers = {{"Host", "s3.amazonaws.com"},
                              {"x-amz-date", "20130524T000000Z"},
                              {"x-amz-storage-class", "REDUCED_REDUNDANCY"},
                              {"x-amz-content-sha256", std::string(kStreamingPayload)},
                              {"Content-Encoding", "aws-chunked"},
                              {"x-amz-decoded-content-length", "66560"},
                              {"Content-Length", "66824"}},
                  .payload_hash = std::string(kStreamingPayload)};
  auto r = SignV4(in, kS3ExampleCreds, "us-east-1", "s3", Time("2013-05-24T00:00:00Z"));
  EXPECT_EQ(r.signed_headers,
            "content-encoding;content-length;host;x-amz-content-sha256;x-amz-date;"
            "x-amz-decoded-content-length;x-amz-storage-class");
  EXPECT_EQ(r.signature, "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9");
  std::string first = ChunkSignature(r, r.signature, Sha256(std::string(65536, 'a')));
  EXPECT_EQ(first, "ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648");
  std::string second = ChunkSignature(r, first, Sha256(std::string(1024, 'a')));
  EXPECT_EQ(second, "0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497");
  EXPECT_EQ(ChunkSignature(r, second, Sha256("")),
            "b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9");
}

TEST(SigV4Test, S3GetBucketLifecycleWithValuelessParameter) {
  SigningInput in{.method = "GET",
                  .encoded_path = "/",
                  .query = {{"lifecycle", ""}},
                  .headers = {{"Host", "examplebucket.s3.amazonaws.com"},
                              {"x-amz-date", "20130524T000000Z"},
                              {"x-amz-content-sha256", std::string(kEmptyPayloadSha256)}},
                  .payload_hash = std::string(kEmptyPayloadSha256)};
  auto r = SignV4(in, kS3ExampleCreds, "us-east-1", "s3", Time("2013-05-24T00:00:00Z"));
  EXPECT_EQ(r.signature, "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543");
}

TEST(SigV4Test, S3ListObjectsSortsQueryParameters) {
  SigningInput in{.method = "GET",
                  .encoded_path = "/",
                  .query = {{"prefix", "J"}, {"max-keys", "2"}},
                  .headers = {{"Host", "examplebucket.s3.amazonaws.com"},
                              {"x-amz-date", "20130524T000000Z"},
                              {"x-amz-content-sha256", std::string(kEmptyPayloadSha256)}},
                  .payload_hash = std::string(kEmptyPayloadSha256)};
  auto r = SignV4(in, kS3ExampleCreds, "us-east-1", "s3", Time("2013-05-24T00:00:00Z"));
  EXPECT_NE(r.canonical_request.find("\nmax-keys=2&prefix=J\n"), std::string::npos);
  EXPECT_EQ(r.signature, "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7");
}

TEST(SigV4Test, S3PresignedUrl) {
  SigningInput in{.method = "GET",
                  .encoded_path = "/test.txt",
                  .headers = {{"Host", "examplebucket.s3.amazonaws.com"}}};
  auto params =
      PresignV4(in, kS3ExampleCreds, "us-east-1", "s3", Time("2013-05-24T00:00:00Z"), 86400);
  ASSERT_EQ(params.back().first, "X-Amz-Signature");
  EXPECT_EQ(params.back().second,
            "aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404");
}

TEST(SigV4Test, GenericSuiteGetVanilla) {
  Credentials creds{.access_key_id = "AKIDEXAMPLE",
                    .secret_access_key = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"};
  SigningInput in{
      .method = "GET",
      .encoded_path = "/",
      .headers = {{"Host", "example.amazonaws.com"}, {"X-Amz-Date", "20150830T123600Z"}},
      .payload_hash = std::string(kEmptyPayloadSha256)};
  auto r = SignV4(in, creds, "us-east-1", "service", Time("2015-08-30T12:36:00Z"));
  EXPECT_EQ(r.signature, "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31");
}

TEST(SigV4Test, HeaderValuesAreTrimmedAndSpacesCollapsed) {
  SigningInput in{.method = "GET",
                  .encoded_path = "/",
                  .headers = {{"Host", "h"}, {"My-Header1", "  a   b   c  "}},
                  .payload_hash = "x"};
  auto r = SignV4(in, kS3ExampleCreds, "r", "s", Time("2015-08-30T12:36:00Z"));
  EXPECT_NE(r.canonical_request.find("my-header1:a b c\n"), std::string::npos);
}

}  // namespace
}  // namespace ferry::aws
