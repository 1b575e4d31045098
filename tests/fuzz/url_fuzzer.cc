// libFuzzer target: the URL parser (storage/url.h) and the URL redactor.
// Properties: never crashes; a parsed s3 URL (bucket, literal key, profile prefix) round-trips
// through FormatS3Url; RedactUrl never returns the query of an http(s) input.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "storage/url.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  auto parsed = ferry::storage::ParseUrl(in, "/fuzz/cwd");
  std::string redacted = ferry::storage::RedactUrl(in);
  (void)ferry::storage::KeyBaseName(in);
  (void)ferry::storage::DirectoryPrefix(std::string(in));
  if (parsed.ok() && parsed->scheme == ferry::storage::Scheme::kS3) {
    std::string again = ferry::storage::FormatS3Url(parsed->bucket, parsed->key, parsed->profile);
    auto reparsed = ferry::storage::ParseUrl(again);
    if (!reparsed.ok() || reparsed->key != parsed->key || reparsed->bucket != parsed->bucket ||
        reparsed->profile != parsed->profile) {
      std::abort();  // what ferry ls prints must paste back
    }
  }
  if (parsed.ok() && (parsed->scheme == ferry::storage::Scheme::kHttp ||
                      parsed->scheme == ferry::storage::Scheme::kHttps)) {
    if (!parsed->query.empty() && redacted.find('?') != std::string::npos) std::abort();
  }
  return 0;
}
