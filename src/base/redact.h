#pragma once
// Secret scrubbing applied to every log line, HTTP trace and error message Ferry prints.
//
// Two layers: (1) patterns that always carry secrets (Authorization headers, SigV4 query
// parameters, session-token headers, credential fields in JSON, XML and INI text) and (2) the
// exact values of secrets this process has loaded (RegisterSecret), so a secret that lands in an
// unexpected place is still removed. Registration is process-wide by design: scrubbing must work
// in every module without threading a registry through each call.

#include <string>
#include <string_view>

namespace ferry {

inline constexpr std::string_view kRedacted = "[REDACTED]";

// Remembers `secret` (length >= 8) so later Redact() calls replace it. Thread-safe.
void RegisterSecret(std::string_view secret);

// Returns `text` with every known secret pattern and registered value replaced by [REDACTED].
std::string Redact(std::string_view text);

}  // namespace ferry
