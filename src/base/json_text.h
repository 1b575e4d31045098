#pragma once
// JSON text of values that may hold bytes that are not UTF-8: local file names, command lines,
// environment values. nlohmann::json::dump() throws on such bytes (type_error 316), which has
// aborted ferry (a checkpoint named with a Latin-1 byte ended `ferry run` before its stage-out).
// JsonText never throws: each invalid byte becomes U+FFFD. Where the exact bytes matter (a path
// to read back), store them also percent-encoded beside the readable form (IsUtf8 says when).

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "base/utf8.h"

namespace ferry {

// j.dump(indent) with invalid UTF-8 replaced instead of thrown.
std::string JsonText(const nlohmann::json& j, int indent = -1);

}  // namespace ferry
