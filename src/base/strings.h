#pragma once
// Small string helpers shared by every module: hex, percent-encoding, trimming, case.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ferry {

std::string HexEncode(std::span<const uint8_t> bytes);
std::string ToLower(std::string_view s);
std::string_view Trim(std::string_view s);
std::vector<std::string_view> Split(std::string_view s, char sep);
bool StartsWith(std::string_view s, std::string_view prefix);
bool EndsWith(std::string_view s, std::string_view suffix);
bool EqualsIgnoreCase(std::string_view a, std::string_view b);

// RFC 3986 percent-encoding of every byte except the unreserved set (A-Z a-z 0-9 - _ . ~).
// With keep_slash, '/' is kept as is (S3 object paths). This is the SigV4 UriEncode.
std::string PercentEncode(std::string_view s, bool keep_slash = false);

// Decodes %XX escapes; returns nullopt on a malformed escape ('%' not followed by two hex
// digits). '+' is kept as '+' (this is not form decoding).
std::optional<std::string> PercentDecode(std::string_view s);

// Parses a non-negative decimal integer that fits in uint64; nullopt otherwise.
std::optional<uint64_t> ParseUint64(std::string_view s);

// "1.5 GiB"-style rendering of a byte count.
std::string HumanBytes(uint64_t bytes);

// Appends `code_point` encoded as UTF-8; a surrogate or a value past U+10FFFF becomes U+FFFD.
void AppendUtf8(std::string& out, uint32_t code_point);

// Parses "64", "64K", "8MiB", "1G" (binary multiples). nullopt when malformed.
std::optional<uint64_t> ParseByteSize(std::string_view s);

}  // namespace ferry
