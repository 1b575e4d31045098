// S3-specific behaviour against a real Ceph RGW: authentication errors, missing buckets,
// unreachable endpoints, the multipart primitives and paging of large listings.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>

#include "rgw_env.h"
#include "storage/s3/s3_client.h"
#include "storage/s3/s3_multipart.h"
#include "storage/s3/s3_store.h"

namespace ferry::storage {
namespace {

using ferry::testing::RgwStoreOptions;

TEST(S3StoreTest, WrongSecretIsAClearAuthenticationError) {
  auto store = MakeS3Store(RgwStoreOptions("", false, "definitely-not-the-secret"));
  auto r = store->List({.prefix = "x"});
  EXPECT_EQ(r.status().code(), StatusCode::kUnauthenticated);
  EXPECT_NE(r.status().message().find("SignatureDoesNotMatch"), std::string::npos)
      << r.status().message();
  EXPECT_EQ(r.status().message().find("definitely-not-the-secret"), std::string::npos);
  auto w = store->WriteAll("k", "v");
  EXPECT_EQ(w.status().code(), StatusCode::kUnauthenticated);
}

TEST(S3StoreTest, MissingBucketSaysSo) {
  auto store = MakeS3Store(RgwStoreOptions("no-such-bucket-here"));
  auto r = store->List({});
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find("NoSuchBucket"), std::string::npos) << r.status().message();
}

TEST(S3StoreTest, UnreachableEndpointFailsWithinBoundedTime) {
  auto opts = RgwStoreOptions();
  opts.endpoint.authority = "127.0.0.1:9";  // discard port: nothing listens
  auto store = MakeS3Store(opts);
  auto start = std::chrono::steady_clock::now();
  auto r = store->Stat("k");
  auto secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(r.status().message().find("HeadObject"), std::string::npos);
  EXPECT_LT(secs, 30.0);
}

TEST(S3StoreTest, MultipartPrimitivesCreateListCompleteAbort) {
  auto opts = RgwStoreOptions();
  s3::S3Client client(opts);
  std::string key = "multipart/primitives-" + std::to_string(::getpid());
  auto id = s3::CreateMultipartUpload(client, key, {{"ferry-test", "1"}}, "");
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  std::string part1(5 << 20, 'a'), part2 = "tail";
  auto e1 = s3::UploadPart(client, key, *id, 1, part1);
  auto e2 = s3::UploadPart(client, key, *id, 2, part2);
  ASSERT_TRUE(e1.ok() && e2.ok());
  auto parts = s3::ListParts(client, key, *id);
  ASSERT_TRUE(parts.ok()) << parts.status().ToString();
  ASSERT_EQ(parts->size(), 2u);
  EXPECT_EQ((*parts)[0].size, part1.size());
  auto etag = s3::CompleteMultipartUpload(client, key, *id, *parts);
  ASSERT_TRUE(etag.ok()) << etag.status().ToString();
  EXPECT_NE(etag->find("-2"), std::string::npos) << *etag;  // multipart ETags end in -N
  auto store = MakeS3Store(opts);
  auto info = store->Stat(key);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->size, part1.size() + part2.size());
  EXPECT_EQ(info->metadata["ferry-test"], "1");

  auto id2 = s3::CreateMultipartUpload(client, key + "-aborted", {}, "");
  ASSERT_TRUE(s3::UploadPart(client, key + "-aborted", *id2, 1, "x").ok());
  EXPECT_TRUE(s3::AbortMultipartUpload(client, key + "-aborted", *id2).ok());
  EXPECT_EQ(s3::ListParts(client, key + "-aborted", *id2).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store->Stat(key + "-aborted").status().code(), StatusCode::kNotFound);
}

TEST(S3StoreTest, UnfinishedUploadsAreListedByPrefix) {
  auto opts = RgwStoreOptions();
  s3::S3Client client(opts);
  std::string key = "multipart/unfinished " + std::to_string(::getpid());  // a space: url-encoded
  std::vector<std::string> ids;
  for (int i = 0; i < 3; ++i) {
    auto id = s3::CreateMultipartUpload(client, key, {}, "");
    ASSERT_TRUE(id.ok()) << id.status().ToString();
    ids.push_back(*id);
  }
  auto other = s3::CreateMultipartUpload(client, key + "-other", {}, "");
  ASSERT_TRUE(other.ok());
  auto listed = s3::ListMultipartUploads(client, key);
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  std::vector<std::string> got;
  for (const auto& u : *listed) {
    if (u.key == key) got.push_back(u.upload_id);
    EXPECT_TRUE(u.initiated.has_value()) << u.upload_id;
  }
  std::sort(got.begin(), got.end());
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(got, ids);
  EXPECT_EQ(listed->size(), 4u);  // the prefix also matches key + "-other"
  for (const auto& id : ids) EXPECT_TRUE(s3::AbortMultipartUpload(client, key, id).ok());
  EXPECT_TRUE(s3::AbortMultipartUpload(client, key + "-other", *other).ok());
  auto after = s3::ListMultipartUploads(client, key);
  ASSERT_TRUE(after.ok());
  EXPECT_TRUE(after->empty());
}

// What a copy killed between CreateMultipartUpload and its journal leaves: the rerun aborts the
// key's uploads begun since its intent, not the longer keys the prefix also lists.
TEST(S3StoreTest, AbortPartWritesSinceTakesOnlyThatKeysRecentUploads) {
  auto opts = RgwStoreOptions();
  s3::S3Client client(opts);
  auto store = MakeS3Store(opts);
  std::string key = "multipart/killed " + std::to_string(::getpid());
  auto orphan = s3::CreateMultipartUpload(client, key, {}, "");
  auto longer = s3::CreateMultipartUpload(client, key + "-longer", {}, "");
  ASSERT_TRUE(orphan.ok() && longer.ok());
  auto now = std::chrono::system_clock::now();
  auto none = store->AbortPartWritesSince(key, now + std::chrono::minutes(10));
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_EQ(*none, 0u);  // begun before that
  auto aborted = store->AbortPartWritesSince(key, now - std::chrono::minutes(10));
  ASSERT_TRUE(aborted.ok()) << aborted.status().ToString();
  EXPECT_EQ(*aborted, 1u);
  auto left = s3::ListMultipartUploads(client, key);
  ASSERT_TRUE(left.ok());
  ASSERT_EQ(left->size(), 1u);
  EXPECT_EQ((*left)[0].key, key + "-longer");
  EXPECT_TRUE(s3::AbortMultipartUpload(client, key + "-longer", *longer).ok());
}

TEST(S3StoreTest, PartWithWrongContentMd5IsRejected) {
  auto opts = RgwStoreOptions();
  s3::S3Client client(opts);
  auto resp = client.Call({.op = "PutObject",
                           .method = "PUT",
                           .key = "md5-check",
                           .headers = {{"Content-MD5", "1B2M2Y8AsgTpgAmY7PhCfg=="}},  // md5("")
                           .body = "not empty",
                           .send_body = true});
  EXPECT_FALSE(resp.ok());
  EXPECT_NE(resp.status().message().find("BadDigest"), std::string::npos)
      << resp.status().message();
}

TEST(S3StoreTest, ListingPagesThroughManyKeys) {
  auto store = MakeS3Store(RgwStoreOptions());
  std::string prefix = "paging-" + std::to_string(::getpid()) + "/";
  for (int i = 0; i < 25; ++i) ASSERT_TRUE(store->WriteAll(prefix + std::to_string(i), "x").ok());
  int pages = 0, keys = 0;
  ASSERT_TRUE(store
                  ->ListAll({.prefix = prefix, .max_keys = 10},
                            [&](const ListPage& p) {
                              ++pages;
                              keys += static_cast<int>(p.objects.size());
                              return Status();
                            })
                  .ok());
  EXPECT_EQ(keys, 25);
  EXPECT_EQ(pages, 3);
}

}  // namespace
}  // namespace ferry::storage
