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
// Uploads one part with Content-MD5 (the server verifies it); returns the part's ETag.
Result<std::string> UploadPart(S3Client& client, const std::string& key,
                               const std::string& upload_id, int part_number,
                               std::string_view data);
// Returns the ETag of the completed object (HEAD is used when the server answers none).
Result<std::string> CompleteMultipartUpload(S3Client& client, const std::string& key,
                                            const std::string& upload_id,
                                            const std::vector<aws::CompletedPart>& parts);
Status AbortMultipartUpload(S3Client& client, const std::string& key, const std::string& upload_id);
Result<std::vector<aws::CompletedPart>> ListParts(S3Client& client, const std::string& key,
                                                  const std::string& upload_id);

}  // namespace ferry::storage::s3
