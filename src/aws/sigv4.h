#pragma once
// AWS Signature Version 4, as a pure function of (request, credentials, region, service, time).
//
// The intermediate products (canonical request, string to sign) are exposed so tests can check
// each step against AWS's published examples. The caller supplies the path already URI-encoded
// exactly as it will be sent (S3 encodes each key byte once; other services encode twice) and
// query parameters unencoded; the signer encodes and sorts them.

#include <string>
#include <utility>
#include <vector>

#include "aws/credentials.h"
#include "base/hash.h"
#include "base/time_format.h"

namespace ferry::aws {

inline constexpr std::string_view kUnsignedPayload = "UNSIGNED-PAYLOAD";
// The payload hash of a body sent in aws-chunked encoding, each chunk signed (ChunkSignature).
inline constexpr std::string_view kStreamingPayload = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD";
inline constexpr std::string_view kEmptyPayloadSha256 =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

struct SigningInput {
  std::string method;
  std::string encoded_path;                                  // e.g. "/examplebucket/a%20b.txt"
  std::vector<std::pair<std::string, std::string>> query;    // unencoded name/value pairs
  std::vector<std::pair<std::string, std::string>> headers;  // includes host and x-amz-date
  std::string payload_hash;  // hex SHA-256 of the body, or UNSIGNED-PAYLOAD
};

struct SigningResult {
  std::string canonical_request;
  std::string string_to_sign;
  std::string signed_headers;   // "host;x-amz-date"
  std::string signature;        // hex
  std::string authorization;    // full Authorization header value
  std::string amz_date, scope;  // "20130524T000000Z", "20130524/us-east-1/s3/aws4_request"
  Sha256Digest signing_key{};   // for chunk signatures
};

// The signature of one chunk of an aws-chunked body (AWS's "Signature Calculations for the
// Authorization Header: Transferring Payload in Multiple Chunks"): `previous` is the request's
// signature for the first chunk, then the previous chunk's; the last chunk is empty.
std::string ChunkSignature(const SigningResult& request, std::string_view previous,
                           const Sha256Digest& chunk_sha256);

SigningResult SignV4(const SigningInput& input, const Credentials& creds, std::string_view region,
                     std::string_view service, SystemTime now);

// Canonical query string: names and values encoded, sorted by name then value.
std::string CanonicalQueryString(const std::vector<std::pair<std::string, std::string>>& query);

// Presigned URL query parameters (X-Amz-Algorithm ... X-Amz-Signature) for a request whose only
// signed header is host. Returned in the order they should be appended.
std::vector<std::pair<std::string, std::string>> PresignV4(const SigningInput& input,
                                                           const Credentials& creds,
                                                           std::string_view region,
                                                           std::string_view service, SystemTime now,
                                                           int expires_seconds);

}  // namespace ferry::aws
