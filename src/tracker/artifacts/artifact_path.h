#pragma once
// Artifact paths as MLflow clients send them ("model/weights.bin") and where they live in the
// store (ROOT_KEY/model/weights.bin). The server's target parser already rejects "." and ".."
// segments in URL paths; this is the second check, for every path a handler joins onto the
// root (also paths from query strings and JSON bodies).

#include <string>
#include <string_view>

#include "base/status.h"

namespace ferry::tracker::artifacts {

// Where unfinished multipart uploads keep their state, below the root; never an artifact.
inline constexpr std::string_view kUploadsDir = ".ferry-mpu";

// Checks an artifact path: relative, '/'-separated, no empty, "." or ".." segment, no
// backslash, NUL or control character, not below kUploadsDir. `allow_empty`: "" names the
// root (listing). InvalidArgument naming the path otherwise. A trailing '/' is dropped.
Result<std::string> CleanArtifactPath(std::string_view path, bool allow_empty = false);

// ROOT_KEY + "/" + path (just path for an empty root, ROOT_KEY for an empty path).
std::string JoinKey(std::string_view root_key, std::string_view path);

}  // namespace ferry::tracker::artifacts
