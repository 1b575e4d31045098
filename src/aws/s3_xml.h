#pragma once
// S3 REST API XML bodies: parsing answers and building requests. Pure functions; no I/O.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "base/time_format.h"

namespace ferry::aws {

struct S3Error {
  std::string code;
  std::string message;
  std::string request_id;
  std::string region;    // some answers name the bucket's region
  std::string endpoint;  // PermanentRedirect names the right endpoint
};
// Parses an <Error> body; nullopt when the body is not an S3 error document.
std::optional<S3Error> ParseS3Error(std::string_view xml);

struct ListedObject {
  std::string key;
  uint64_t size = 0;
  std::string etag;
  std::optional<SystemTime> last_modified;
};
struct ListObjectsV2Page {
  std::vector<ListedObject> objects;
  std::vector<std::string> common_prefixes;
  bool is_truncated = false;
  std::string next_continuation_token;
};
// Decodes url-encoded keys when the answer says EncodingType=url.
Result<ListObjectsV2Page> ParseListObjectsV2(std::string_view xml);

Result<std::string> ParseInitiateMultipartUpload(std::string_view xml);  // the upload id

struct CompletedPart {
  int number = 0;
  std::string etag;
  uint64_t size = 0;  // filled by ListParts
};
std::string BuildCompleteMultipartUpload(const std::vector<CompletedPart>& parts);
// CompleteMultipartUpload may answer 200 with an <Error> body; that is returned as a Status.
// Returns the ETag, which may be empty (RGW 16 answers with an empty one).
Result<std::string> ParseCompleteMultipartUpload(std::string_view xml);

struct ListPartsPage {
  std::vector<CompletedPart> parts;
  bool is_truncated = false;
  int next_marker = 0;
};
Result<ListPartsPage> ParseListParts(std::string_view xml);

// ListMultipartUploads: the unfinished uploads under a prefix (one page).
struct UnfinishedUpload {
  std::string key;
  std::string upload_id;
  std::optional<SystemTime> initiated;
};
struct ListMultipartUploadsPage {
  std::vector<UnfinishedUpload> uploads;
  bool is_truncated = false;
  std::string next_key_marker, next_upload_id_marker;
};
// Decodes url-encoded keys when the answer says EncodingType=url.
Result<ListMultipartUploadsPage> ParseListMultipartUploads(std::string_view xml);

std::string BuildDeleteObjects(const std::vector<std::string>& keys, bool quiet);
struct DeleteFailure {
  std::string key;
  std::string code;
  std::string message;
};
Result<std::vector<DeleteFailure>> ParseDeleteObjectsResult(std::string_view xml);

// CopyObject answers 200 and may still carry an <Error>; returns the new ETag.
Result<std::string> ParseCopyObjectResult(std::string_view xml);

}  // namespace ferry::aws
