#pragma once
// Where S3 requests go: endpoint, region and addressing style.
//
// Endpoint: `endpoint` (--endpoint-url) > AWS_ENDPOINT_URL_S3 > AWS_ENDPOINT_URL > the profile's
// `s3.endpoint_url` / `endpoint_url` > https://s3.REGION.amazonaws.com. Setting
// AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true skips the environment and profile endpoints.
// Region: `region` (--region) > AWS_REGION > AWS_DEFAULT_REGION > profile `region` > us-east-1.
// Addressing: `addressing` (path|virtual) > profile `s3.addressing_style` > virtual-hosted for
// AWS with DNS-compatible bucket names, path-style for custom endpoints (what S3-compatible
// servers expect). This is the AWS CLI's order. With `profile_first` (a "PROFILE:s3://" URL) the
// profile's endpoint and region come before the environment's.
// A profile that was named (`profile` or AWS_PROFILE) and is in neither file is an error.

#include <string>
#include <utility>

#include "base/environment.h"
#include "base/status.h"

namespace ferry::aws {

struct S3EndpointInput {
  std::string bucket;
  std::string endpoint;    // "" = not given
  std::string region;      // "" = not given
  std::string addressing;  // "", "path", "virtual"
  std::string profile;     // "" = AWS_PROFILE or default
  bool profile_first = false;
};

struct S3Endpoint {
  std::string scheme;     // "https" or "http"
  std::string authority;  // host[:port] the request goes to (with the bucket when virtual)
  std::string region;
  bool path_style = true;
  bool custom = false;  // not an amazonaws.com default

  // The URL of an object, its key already encoded with PercentEncode(key, keep_slash=true).
  std::string ObjectUrl(const std::string& bucket, const std::string& encoded_key) const;
  // The path part that is signed: "/bucket/key" (path style) or "/key".
  std::string ObjectPath(const std::string& bucket, const std::string& encoded_key) const;
};

Result<S3Endpoint> ResolveS3Endpoint(const Environment& env, const S3EndpointInput& input);

// An endpoint URL ("http://nas:7480", "https://s3.example.com/") as (scheme, host[:port]): http or
// https, no user:password@, no path. Errors never echo a user:password@.
Result<std::pair<std::string, std::string>> ParseEndpointUrl(std::string_view endpoint);

// Bucket names: 3-63 characters of letters, digits, '.', '-' and '_', starting and ending with a
// letter or digit (AWS's rule, relaxed for the uppercase and '_' that older S3-compatible
// servers allow).
Status ValidateBucketName(std::string_view bucket);

}  // namespace ferry::aws
