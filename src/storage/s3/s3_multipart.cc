#include "storage/s3/s3_multipart.h"

#include "base/hash.h"
#include "base/strings.h"
#include "storage/s3/s3_internal.h"

namespace ferry::storage::s3 {

Result<std::string> CreateMultipartUpload(S3Client& client, const std::string& key,
                                          const std::map<std::string, std::string>& metadata,
                                          const std::string& content_type) {
  S3Call call{.op = "CreateMultipartUpload",
              .method = "POST",
              .key = key,
              .query = {{"uploads", ""}},
              .send_body = true,
              .sign_body = true};
  for (const auto& [k, v] : metadata) call.headers.push_back({"x-amz-meta-" + k, v});
  if (!content_type.empty()) call.headers.push_back({"Content-Type", content_type});
  FERRY_ASSIGN_OR_RETURN(auto resp, client.Call(call));
  return aws::ParseInitiateMultipartUpload(resp.body);
}

Result<std::string> UploadPart(S3Client& client, const std::string& key,
                               const std::string& upload_id, int part_number, std::string_view data,
                               const Sha256Digest* sha256) {
  S3Call call{.op = "UploadPart",
              .method = "PUT",
              .key = key,
              .query = {{"partNumber", std::to_string(part_number)}, {"uploadId", upload_id}},
              .body = data,
              .send_body = true,
              .verify_body = true,
              .chunked_ok = true,
              .data_transfer = true};
  if (sha256) call.body_sha256 = *sha256;
  FERRY_ASSIGN_OR_RETURN(auto resp, client.Call(call));
  auto etag = resp.Header("etag");
  if (!etag) return Internal("UploadPart '" + client.UrlFor(key) + "': answer has no ETag");
  std::string e(*etag);
  if (e.size() >= 2 && e.front() == '"') e = e.substr(1, e.size() - 2);
  return e;
}

Result<std::string> CompleteMultipartUpload(S3Client& client, const std::string& key,
                                            const std::string& upload_id,
                                            const std::vector<aws::CompletedPart>& parts) {
  std::string body = aws::BuildCompleteMultipartUpload(parts);
  S3Call call{.op = "CompleteMultipartUpload",
              .method = "POST",
              .key = key,
              .query = {{"uploadId", upload_id}},
              .headers = {{"Content-Type", "application/xml"}},
              .body = body,
              .send_body = true,
              .sign_body = true};
  FERRY_ASSIGN_OR_RETURN(auto resp, client.Call(call));
  FERRY_ASSIGN_OR_RETURN(std::string etag, aws::ParseCompleteMultipartUpload(resp.body));
  if (etag.empty()) {
    // RGW 16 answers an empty ETag; HEAD has the right one.
    FERRY_ASSIGN_OR_RETURN(auto head,
                           client.Call({.op = "HeadObject", .method = "HEAD", .key = key}));
    etag = InfoFromHeaders(key, head).etag;
  }
  return etag;
}

Result<std::string> ReplaceMetadata(S3Client& client, const std::string& key,
                                    const std::string& etag,
                                    const std::map<std::string, std::string>& metadata,
                                    const std::string& content_type) {
  S3Call call{.op = "CopyObject", .method = "PUT", .key = key};
  call.headers.push_back(
      {"x-amz-copy-source", "/" + client.options().bucket + "/" + PercentEncode(key, true)});
  call.headers.push_back({"x-amz-copy-source-if-match", "\"" + etag + "\""});
  call.headers.push_back({"x-amz-metadata-directive", "REPLACE"});
  for (const auto& [k, v] : metadata) call.headers.push_back({"x-amz-meta-" + k, v});
  if (!content_type.empty()) call.headers.push_back({"Content-Type", content_type});
  call.send_body = true;  // empty PUT body
  FERRY_ASSIGN_OR_RETURN(auto resp, client.Call(call));
  auto new_etag = aws::ParseCopyObjectResult(resp.body);
  if (!new_etag.ok())
    return new_etag.status().WithContext("CopyObject '" + client.UrlFor(key) + "'");
  return new_etag;
}

Status AbortMultipartUpload(S3Client& client, const std::string& key,
                            const std::string& upload_id) {
  auto resp = client.Call({.op = "AbortMultipartUpload",
                           .method = "DELETE",
                           .key = key,
                           .query = {{"uploadId", upload_id}}});
  if (!resp.ok() && resp.status().code() == StatusCode::kNotFound) return Status();
  return resp.status();
}

Result<std::vector<aws::CompletedPart>> ListParts(S3Client& client, const std::string& key,
                                                  const std::string& upload_id) {
  std::vector<aws::CompletedPart> out;
  int marker = 0;
  while (true) {
    S3Call call{.op = "ListParts", .key = key, .query = {{"uploadId", upload_id}}};
    if (marker > 0) call.query.emplace_back("part-number-marker", std::to_string(marker));
    FERRY_ASSIGN_OR_RETURN(auto resp, client.Call(call));
    FERRY_ASSIGN_OR_RETURN(auto page, aws::ParseListParts(resp.body));
    out.insert(out.end(), page.parts.begin(), page.parts.end());
    if (!page.is_truncated || page.next_marker <= marker) return out;
    marker = page.next_marker;
  }
}

Result<std::vector<aws::UnfinishedUpload>> ListMultipartUploads(S3Client& client,
                                                                const std::string& prefix) {
  std::vector<aws::UnfinishedUpload> out;
  std::string key_marker, id_marker;
  while (true) {
    S3Call call{.op = "ListMultipartUploads", .bucket_level = true};
    // No encoding-type=url: RGW 16 then encodes the keys but does not say so in the answer
    // (no <EncodingType>), so they could not be told from keys holding a literal '%'.
    call.query = {{"uploads", ""}, {"prefix", prefix}};
    if (!key_marker.empty()) {
      call.query.emplace_back("key-marker", key_marker);
      call.query.emplace_back("upload-id-marker", id_marker);
    }
    FERRY_ASSIGN_OR_RETURN(auto resp, client.Call(call));
    FERRY_ASSIGN_OR_RETURN(auto page, aws::ParseListMultipartUploads(resp.body));
    out.insert(out.end(), page.uploads.begin(), page.uploads.end());
    // A truncated page must move the markers on; one that does not would repeat forever.
    if (!page.is_truncated ||
        (page.next_key_marker == key_marker && page.next_upload_id_marker == id_marker)) {
      return out;
    }
    key_marker = page.next_key_marker;
    id_marker = page.next_upload_id_marker;
  }
}

}  // namespace ferry::storage::s3
