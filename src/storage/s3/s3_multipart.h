#pragma once
// S3 multipart upload primitives (create, upload part, complete, abort, list parts), used by the
// streaming writer and by the copy engine's resumable uploads.

#include <map>
#include <string>
#include <vector>

#include "aws/s3_xml.h"
#include "storage/s3/s3_client.h"

namespace ferry::storage::s3 {

Result<std::string> CreateMultipartUpload(S3Client& client, const std::string& key,
                                          const std::map<std::string, std::string>& metadata,
                                          const std::string& content_type);
// Uploads one part, the server made to verify it (S3StoreOptions::body_check); `sha256`, when
// given, is the part's digest computed by the caller. Returns the part's ETag.
Result<std::string> UploadPart(S3Client& client, const std::string& key,
                               const std::string& upload_id, int part_number, std::string_view data,
                               const Sha256Digest* sha256 = nullptr);
// Returns the ETag of the completed object (HEAD is used when the server answers none).
Result<std::string> CompleteMultipartUpload(S3Client& client, const std::string& key,
                                            const std::string& upload_id,
                                            const std::vector<aws::CompletedPart>& parts);
// Replaces the user metadata of `key` (CopyObject onto itself, x-amz-metadata-directive
// REPLACE), pinned with x-amz-copy-source-if-match to `etag`; returns the object's new ETag.
// Servers copy no data for it when source and destination are one object (RGW); up to
// S3StoreOptions::max_single_copy bytes.
Result<std::string> ReplaceMetadata(S3Client& client, const std::string& key,
                                    const std::string& etag,
                                    const std::map<std::string, std::string>& metadata,
                                    const std::string& content_type);
Status AbortMultipartUpload(S3Client& client, const std::string& key, const std::string& upload_id);
Result<std::vector<aws::CompletedPart>> ListParts(S3Client& client, const std::string& key,
                                                  const std::string& upload_id);
// The unfinished multipart uploads of the keys that begin with `prefix`, every page.
Result<std::vector<aws::UnfinishedUpload>> ListMultipartUploads(S3Client& client,
                                                                const std::string& prefix);

}  // namespace ferry::storage::s3
