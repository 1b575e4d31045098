#pragma once
// UTF-8 validation: names from local filesystems and argv are bytes, while JSON text and S3 object
// keys must be UTF-8.

#include <string_view>

namespace ferry {

// True when `s` is well-formed UTF-8 (RFC 3629: no overlong forms, surrogates or values past
// U+10FFFF).
bool IsUtf8(std::string_view s);

}  // namespace ferry
