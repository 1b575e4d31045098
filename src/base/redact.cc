#include "base/redact.h"

#include <algorithm>
#include <vector>

#include "base/mutex.h"
#include "base/strings.h"

namespace ferry {

namespace {

// The secret values registered so far (process-wide, see redact.h).
struct SecretValues {
  Mutex mu;
  std::vector<std::string> values GUARDED_BY(mu);
};
SecretValues& Registered() {
  static SecretValues secrets;
  return secrets;
}

// Names whose value, up to a terminator, is secret. `stop` lists the bytes that end the value.
struct Pattern {
  std::string_view name;  // matched case-insensitively
  std::string_view stop;
  bool needs_assign = false;  // only when '=' or ':' follows (INI and env lines, not prose)
};

constexpr Pattern kPatterns[] = {
    {"authorization:", "\r\n"},
    {"x-amz-security-token:", "\r\n"},
    {"x-aws-ec2-metadata-token:", "\r\n"},
    {"x-amz-security-token=", "&\"' \r\n"},
    {"x-amz-credential=", "&\"' \r\n"},
    {"x-amz-signature=", "&\"' \r\n"},
    {"signature=", "&,\"' \r\n"},
    {"credential=", ",&\"' \r\n"},
    {"aws_secret_access_key", "\r\n", true},
    {"aws_session_token", "\r\n", true},
    {"\"secretaccesskey\"", ",}\r\n"},
    {"\"token\"", ",}\r\n"},
    {"\"sessiontoken\"", ",}\r\n"},
    {"<secretaccesskey>", "<"},
    {"<sessiontoken>", "<"},
    // Generic shapes: query parameters and flags of other services (Azure SAS sig=, tokens,
    // passwords), so a secret in a user's command line or URL is scrubbed too.
    {"password", " &\"',;\r\n", true},
    {"passwd", " &\"',;\r\n", true},
    {"--password ", " \r\n"},
    {"token=", "&\"' \r\n"},
    {"sig=", "&\"' \r\n"},
    {"secret=", "&\"' \r\n"},
    {"api_key=", "&\"' \r\n"},
    {"apikey=", "&\"' \r\n"},
};

// "scheme://user:password@host": the userinfo is replaced.
void RedactUserinfo(std::string& text) {
  for (size_t sep = text.find("://"); sep != std::string::npos; sep = text.find("://", sep + 3)) {
    size_t start = sep + 3;
    size_t end = text.find_first_of("/?#&\"' \r\n", start);
    if (end == std::string::npos) end = text.size();
    size_t at = text.rfind('@', end - 1);
    if (at == std::string::npos || at < start || end == start) continue;
    if (text.compare(start, at - start, kRedacted) == 0) continue;
    text.replace(start, at - start, kRedacted);
  }
  // A Host header with userinfo ("Host: user:pass@host").
  std::string lower = ToLower(text);
  for (size_t pos = lower.find("host:"); pos != std::string::npos;
       pos = lower.find("host:", pos + 5)) {
    size_t start = pos + 5;
    while (start < text.size() && text[start] == ' ') ++start;
    size_t end = text.find_first_of("\r\n /", start);
    if (end == std::string::npos) end = text.size();
    size_t at = text.rfind('@', end == 0 ? 0 : end - 1);
    if (at == std::string::npos || at < start) continue;
    text.replace(start, at - start, kRedacted);
    lower = ToLower(text);
  }
}

void RedactPattern(std::string& text, const Pattern& p) {
  std::string lower = ToLower(text);
  size_t pos = 0;
  while ((pos = lower.find(p.name, pos)) != std::string::npos) {
    size_t start = pos + p.name.size();
    if (p.needs_assign) {
      size_t k = start;
      while (k < text.size() && (text[k] == ' ' || text[k] == '"')) ++k;
      if (k >= text.size() || (text[k] != '=' && text[k] != ':')) {
        pos = start;
        continue;
      }
    }
    // Skip separators between the name and the value (" = ", ": ", "\":\"").
    while (start < text.size() &&
           (text[start] == ' ' || text[start] == '=' || text[start] == ':' || text[start] == '"')) {
      ++start;
    }
    size_t end = text.find_first_of(p.stop, start);
    if (end == std::string::npos) end = text.size();
    // Keep a closing quote of a JSON string value.
    if (end > start && text[end - 1] == '"') --end;
    if (end > start && text.compare(start, end - start, kRedacted) != 0) {
      text.replace(start, end - start, kRedacted);
      lower.replace(start, end - start, kRedacted);
    }
    pos = start + kRedacted.size();
  }
}

}  // namespace

void RegisterSecret(std::string_view secret) {
  if (secret.size() < 8) return;
  SecretValues& r = Registered();
  MutexLock lock(r.mu);
  if (std::find(r.values.begin(), r.values.end(), secret) == r.values.end()) {
    r.values.emplace_back(secret);
  }
}

std::string Redact(std::string_view in) {
  std::string text(in);
  for (const auto& p : kPatterns) RedactPattern(text, p);
  RedactUserinfo(text);
  SecretValues& r = Registered();
  MutexLock lock(r.mu);
  for (const auto& secret : r.values) {
    size_t pos = 0;
    while ((pos = text.find(secret, pos)) != std::string::npos) {
      text.replace(pos, secret.size(), kRedacted);
      pos += kRedacted.size();
    }
  }
  return text;
}

}  // namespace ferry
