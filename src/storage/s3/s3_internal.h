#pragma once
// Pieces of the S3 backend shared between its files. Not part of the public interface.

#include <memory>
#include <string>

#include "http/http_client.h"
#include "storage/s3/s3_client.h"
#include "storage/store.h"

namespace ferry::storage::s3 {

// Size, ETag, Last-Modified and user metadata (x-amz-meta-*) of an answer.
ObjectInfo InfoFromHeaders(std::string key, const http::Response& r);
// Adds an answer's x-amz-meta-* headers to info.metadata.
void AddMetadata(const http::Response& r, ObjectInfo& info);

Result<std::unique_ptr<Writer>> NewS3Writer(std::shared_ptr<S3Client> client, std::string key,
                                            WriteOptions options);

// One PUT with Content-MD5, metadata and (optionally) If-None-Match.
Result<ObjectInfo> PutObject(S3Client& client, const std::string& key, std::string_view data,
                             const WriteOptions& options);

Result<std::unique_ptr<PartWriter>> NewS3PartWriter(std::shared_ptr<S3Client> client,
                                                    std::string key, PartWriteOptions options);

}  // namespace ferry::storage::s3
