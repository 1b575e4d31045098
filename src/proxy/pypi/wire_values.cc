#include "proxy/pypi/wire_values.h"

#include "base/strings.h"

namespace ferry::proxy::pypi {

std::string LowerAscii(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

bool IsHashName(std::string_view name) {
  if (name.empty() || name.size() > 32) return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

bool IsHexDigest(std::string_view value) {
  if (value.empty() || value.size() > 256) return false;
  for (char c : value) {
    bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    if (!ok) return false;
  }
  return true;
}

std::optional<std::pair<std::string, std::string>> ParseHashPair(std::string_view s) {
  size_t eq = s.find('=');
  if (eq == std::string_view::npos) return std::nullopt;
  std::string_view name = s.substr(0, eq), value = s.substr(eq + 1);
  if (!IsHashName(name) || !IsHexDigest(value)) return std::nullopt;
  return std::make_pair(LowerAscii(name), LowerAscii(value));
}

std::optional<std::pair<std::string, std::string>> PreferredHash(const Hashes& hashes) {
  if (hashes.empty()) return std::nullopt;
  auto it = hashes.find("sha256");
  if (it == hashes.end()) it = hashes.begin();
  return *it;
}

CoreMetadata ParseMetadataAttribute(std::string_view value) {
  CoreMetadata m;
  value = Trim(value);
  if (value == "true") {
    m.available = true;
  } else if (auto hash = ParseHashPair(value)) {
    m.available = true;
    m.hashes.insert(std::move(*hash));
  }
  return m;
}

std::string MetadataAttributeValue(const CoreMetadata& metadata) {
  if (auto hash = PreferredHash(metadata.hashes)) return hash->first + "=" + hash->second;
  return "true";
}

bool IsSupportedApiVersion(std::string_view version) {
  return version == "1" || StartsWith(version, "1.");
}

std::string Abbreviate(std::string_view s) {
  if (s.size() <= 80) return std::string(s);
  return std::string(s.substr(0, 77)) + "...";
}

}  // namespace ferry::proxy::pypi
