#pragma once
// The S3 backend: any S3-compatible endpoint (AWS, Ceph RGW, MinIO, ...).

#include <cstdint>
#include <memory>
#include <string>

#include "aws/credentials.h"
#include "aws/endpoint.h"
#include "base/retry.h"
#include "storage/store.h"

namespace ferry::http {
class Client;
}

namespace ferry::storage {

struct S3StoreOptions {
  std::string bucket;
  std::string url_profile;  // the PROFILE of "PROFILE:s3://..." URLs, kept in UrlFor's output
  aws::S3Endpoint endpoint;
  std::shared_ptr<aws::CredentialsProvider> credentials;  // required
  std::shared_ptr<http::Client> http;                     // required; shared for reuse
  RetryPolicy retry;
  // Multipart: objects above part_size are uploaded in parts of part_size (min 5 MiB, the S3
  // minimum), with up to upload_concurrency parts in flight. Memory per writer is about
  // (upload_concurrency + 1) * part_size.
  uint64_t part_size = 8ull << 20;
  int upload_concurrency = 4;
  uint64_t max_single_copy = 5ull << 30;  // CopyObject limit; larger copies stream
  // How the server is made to verify each uploaded body (PutObject, UploadPart): its SHA-256 in
  // the signature (x-amz-content-sha256; S3, RGW and MinIO reject a body that does not match),
  // or Content-MD5, or (UploadPart only) kChunked: the body in aws-chunked encoding, each 64 KiB
  // chunk's SHA-256 signed (STREAMING-AWS4-HMAC-SHA256-PAYLOAD), the chunks hashed side by side
  // in SIMD lanes (base/sha256_lanes.h): about 40% less client CPU per byte, but RGW 16 spends
  // 35% more CPU verifying chunks than one SHA-256, so it is asked for, not automatic. kAuto:
  // SHA-256 where the CPU has SHA instructions, else MD5. Requests must be signed for all but
  // MD5 (FERRY_S3_BODY_CHECKSUM=auto|chunked|sha256|md5; anonymous requests always use MD5). A
  // server that refuses chunked bodies gets signed SHA-256 payloads from then on.
  enum class BodyCheck { kAuto, kChunked, kSha256, kMd5 };
  BodyCheck body_check = BodyCheck::kAuto;
};

std::shared_ptr<Store> MakeS3Store(S3StoreOptions options);

// Creates the bucket (for tests, benchmarks and `ferry mb`). An existing bucket owned by the
// caller is not an error.
Status CreateS3Bucket(const S3StoreOptions& options);

}  // namespace ferry::storage
