#pragma once
// A small JSON reader for simple API pages (RFC 8259). Strings are views into the input unless
// they contain escapes (then into the document's own storage), so a 10 MB page with 20,000
// files costs a few allocations per file instead of one per key and value (nlohmann's DOM took
// half a second for such a page in the dev build). Not a general JSON library: numbers are kept
// as their literal text, duplicate keys resolve to the last one (as nlohmann does), and bytes
// are not checked to be UTF-8 (the renderers replace what is not).

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace ferry::proxy::pypi {

struct JsonMember;

struct JsonValue {
  enum class Type : uint8_t { kNull, kBool, kNumber, kString, kArray, kObject };
  Type type = Type::kNull;
  bool boolean = false;
  std::string_view text;  // a string's decoded contents, or a number's literal
  // An object's members or an array's items (with empty keys), in document order. One vector
  // for both keeps a value at 48 bytes: a 20,000-file page has a quarter million of them.
  std::vector<JsonMember> children;

  bool is_string() const { return type == Type::kString; }
  bool is_bool() const { return type == Type::kBool; }
  bool is_array() const { return type == Type::kArray; }
  bool is_object() const { return type == Type::kObject; }
  // The member `key` of an object (the last one when repeated); nullptr when absent or not an
  // object.
  const JsonValue* Find(std::string_view key) const;
  // A number that is a non-negative integer fitting uint64; nullopt otherwise.
  std::optional<uint64_t> AsUint64() const;
};

struct JsonMember {
  std::string_view key;
  JsonValue value;
};

// A parsed document: the root and the storage its views may point into (besides the input,
// which must outlive it).
struct JsonDocument {
  JsonValue root;
  std::deque<std::string> decoded;
};

// Parses `text` into `doc`. InvalidArgument (naming the byte offset) for malformed JSON or
// nesting deeper than `max_depth` arrays/objects.
Status ParseJson(std::string_view text, int max_depth, JsonDocument& doc);

}  // namespace ferry::proxy::pypi
