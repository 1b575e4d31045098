#pragma once
// URL helpers for simple API pages: resolving links against the page URL (RFC 3986 section 5,
// http and https only) and taking fragments and file names apart.

#include <optional>
#include <string>
#include <string_view>

namespace ferry::proxy::pypi {

// Resolves `ref` (absolute, scheme-relative, absolute-path or relative, with dot segments)
// against the absolute http(s) URL `base`. nullopt when the result is not http(s) (javascript:,
// data:, file: and the like) or `base` is not an absolute http(s) URL. Surrounding whitespace
// in `ref` is ignored; the fragment is kept.
std::optional<std::string> ResolveUrl(std::string_view base, std::string_view ref);

// Splits "u#f" into ("u", "f"); ("u", "") when there is no '#'.
std::pair<std::string_view, std::string_view> SplitFragment(std::string_view url);

// The percent-decoded last path segment of an absolute URL (no query, no fragment); nullopt
// when it is empty or not a safe file name (see IsSafeFilename).
std::optional<std::string> FilenameOfUrl(std::string_view url);

// A file name the proxy may put in a path: 1-255 bytes of well-formed UTF-8, no '/', '\\',
// control bytes or DEL, not "." or "..".
bool IsSafeFilename(std::string_view name);

}  // namespace ferry::proxy::pypi
