#pragma once
// Values the HTML and JSON forms share: hash pairs, the core-metadata attribute, API versions.
// Internal to proxy/pypi.

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "proxy/pypi/project_page.h"

namespace ferry::proxy::pypi {

// A hash name: 1-32 of [a-z0-9] (after lowercasing). A hash value: 1-256 hex digits.
bool IsHashName(std::string_view name);
bool IsHexDigest(std::string_view value);

// "<name>=<hex>" -> (lowercase name, lowercase hex); nullopt when malformed.
std::optional<std::pair<std::string, std::string>> ParseHashPair(std::string_view s);

// The hash a fragment or metadata attribute names: sha256 when present, else the first.
std::optional<std::pair<std::string, std::string>> PreferredHash(const Hashes& hashes);

// data-core-metadata / data-dist-info-metadata: "true" or "<name>=<hex>"; anything else is
// absent (never a hash that upstream did not give).
CoreMetadata ParseMetadataAttribute(std::string_view value);
std::string MetadataAttributeValue(const CoreMetadata& metadata);

// Major version 1 (PEP 629: a client must refuse a major version it does not know).
bool IsSupportedApiVersion(std::string_view version);

// ASCII lowercase (base's ToLower goes through the locale).
std::string LowerAscii(std::string_view s);

// At most 80 bytes of `s` for messages ("..." when cut).
std::string Abbreviate(std::string_view s);

}  // namespace ferry::proxy::pypi
