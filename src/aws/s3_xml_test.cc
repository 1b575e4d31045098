#include "aws/s3_xml.h"

#include <gtest/gtest.h>

namespace ferry::aws {
namespace {

TEST(S3XmlTest, ParsesListObjectsV2WithUrlEncodedKeys) {
  auto page = ParseListObjectsV2(R"(<?xml version="1.0"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
  <Name>b</Name><Prefix>d%2F</Prefix><EncodingType>url</EncodingType>
  <IsTruncated>true</IsTruncated><NextContinuationToken>tok+1</NextContinuationToken>
  <Contents><Key>d/a+b%2Bc%25.txt</Key><LastModified>2024-01-02T03:04:05.000Z</LastModified>
    <ETag>"abc"</ETag><Size>42</Size></Contents>
  <CommonPrefixes><Prefix>d/sub%C3%A9/</Prefix></CommonPrefixes>
</ListBucketResult>)");
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page->objects.size(), 1u);
  EXPECT_EQ(page->objects[0].key, "d/a b+c%.txt");
  EXPECT_EQ(page->objects[0].size, 42u);
  EXPECT_EQ(page->objects[0].etag, "abc");
  EXPECT_TRUE(page->is_truncated);
  EXPECT_EQ(page->next_continuation_token, "tok+1");
  EXPECT_EQ(page->common_prefixes[0], "d/sub\xc3\xa9/");
}

TEST(S3XmlTest, ParsesErrors) {
  auto e = ParseS3Error(
      "<Error><Code>NoSuchKey</Code><Message>gone</Message><RequestId>r1</RequestId></Error>");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->code, "NoSuchKey");
  EXPECT_EQ(e->request_id, "r1");
  EXPECT_FALSE(ParseS3Error("not xml").has_value());
}

TEST(S3XmlTest, CompleteMultipartRoundTrip) {
  std::string xml = BuildCompleteMultipartUpload({{1, "e1"}, {2, "e2"}});
  EXPECT_EQ(xml,
            "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>\"e1\"</ETag></Part>"
            "<Part><PartNumber>2</PartNumber><ETag>\"e2\"</ETag></Part></CompleteMultipartUpload>");
  EXPECT_EQ(
      *ParseCompleteMultipartUpload(
          "<CompleteMultipartUploadResult><ETag>\"x-2\"</ETag></CompleteMultipartUploadResult>"),
      "x-2");
  auto err = ParseCompleteMultipartUpload("<Error><Code>InternalError</Code></Error>");
  EXPECT_EQ(err.status().code(), StatusCode::kUnavailable);
}

TEST(S3XmlTest, DeleteObjectsEscapesKeysAndReportsFailures) {
  std::string xml = BuildDeleteObjects({"a&b", "<c>"}, true);
  EXPECT_NE(xml.find("<Key>a&amp;b</Key>"), std::string::npos);
  EXPECT_NE(xml.find("<Key>&lt;c&gt;</Key>"), std::string::npos);
  auto r = ParseDeleteObjectsResult(
      "<DeleteResult><Error><Key>k</Key><Code>AccessDenied</Code><Message>m</Message></Error>"
      "</DeleteResult>");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].code, "AccessDenied");
}

TEST(S3XmlTest, ParsesMultipartAnswers) {
  EXPECT_EQ(*ParseInitiateMultipartUpload("<InitiateMultipartUploadResult><UploadId>u-1</UploadId>"
                                          "</InitiateMultipartUploadResult>"),
            "u-1");
  auto parts = ParseListParts(
      "<ListPartsResult><IsTruncated>false</IsTruncated><Part><PartNumber>3</PartNumber>"
      "<ETag>\"e\"</ETag><Size>8</Size></Part></ListPartsResult>");
  ASSERT_TRUE(parts.ok());
  EXPECT_EQ(parts->parts[0].number, 3);
  EXPECT_EQ(parts->parts[0].size, 8u);
}

TEST(S3Xml, ListMultipartUploadsGivesKeysIdsAndWhenEachBegan) {
  auto page = ParseListMultipartUploads(
      "<ListMultipartUploadsResult><EncodingType>url</EncodingType><IsTruncated>true</IsTruncated>"
      "<NextKeyMarker>a%20b</NextKeyMarker><NextUploadIdMarker>u-2</NextUploadIdMarker>"
      "<Upload><Key>a%20b</Key><UploadId>u-1</UploadId>"
      "<Initiated>2026-12-02T13:22:55.524Z</Initiated></Upload>"
      "<Upload><Key>a%20b</Key><UploadId>u-2</UploadId></Upload></ListMultipartUploadsResult>");
  ASSERT_TRUE(page.ok()) << page.status().message();
  ASSERT_EQ(page->uploads.size(), 2u);
  EXPECT_EQ(page->uploads[0].key, "a b");
  EXPECT_EQ(page->uploads[0].upload_id, "u-1");
  ASSERT_TRUE(page->uploads[0].initiated.has_value());
  EXPECT_FALSE(page->uploads[1].initiated.has_value());
  EXPECT_TRUE(page->is_truncated);
  EXPECT_EQ(page->next_key_marker, "a b");
  EXPECT_EQ(page->next_upload_id_marker, "u-2");
  EXPECT_FALSE(ParseListMultipartUploads("<Other/>").ok());
  EXPECT_FALSE(
      ParseListMultipartUploads("<ListMultipartUploadsResult><EncodingType>url</EncodingType>"
                                "<Upload><Key>%zz</Key></Upload></ListMultipartUploadsResult>")
          .ok());
}

}  // namespace
}  // namespace ferry::aws
