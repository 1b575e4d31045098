// libFuzzer target: every S3 and STS XML answer parser (aws/s3_xml.h, aws/sts.h).
#include <cstdint>
#include <string_view>

#include "aws/s3_xml.h"
#include "aws/sts.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view xml(reinterpret_cast<const char*>(data), size);
  (void)ferry::aws::ParseS3Error(xml);
  (void)ferry::aws::ParseListObjectsV2(xml);
  (void)ferry::aws::ParseCompleteMultipartUpload(xml);
  (void)ferry::aws::ParseListParts(xml);
  (void)ferry::aws::ParseListMultipartUploads(xml);
  (void)ferry::aws::ParseDeleteObjectsResult(xml);
  (void)ferry::aws::ParseCopyObjectResult(xml);
  (void)ferry::aws::ParseAssumeRoleWithWebIdentityResponse(xml);
  (void)ferry::aws::ParseStsError(xml);
  return 0;
}
