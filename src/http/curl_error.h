#pragma once
// The one translation from libcurl result codes to Status.

#include <string_view>

#include "base/status.h"

namespace ferry::http {

// `code` is a CURLcode; `detail` is curl's error buffer (may be empty).
Status CurlError(int code, std::string_view detail);

}  // namespace ferry::http
