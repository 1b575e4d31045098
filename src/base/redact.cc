#include "base/redact.h"

#include <algorithm>
#include <mutex>
#include <vector>

#include "base/strings.h"

namespace ferry {

namespace {

std::mutex& SecretsMutex() {
  static std::mutex mu;
  return mu;
}
std::vector<std::string>& Secrets() {
  static std::vector<std::string> secrets;
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
};

void RedactPattern(std::string& text, const Pattern& p) {
  std::string lower = ToLower(text);
  size_t pos = 0;
  while ((pos = lower.find(p.name, pos)) != std::string::npos) {
    size_t start = pos + p.name.size();
    if (p.needs_assign) {
      size_t k = start;
      while (k < text.size() && text[k] == ' ') ++k;
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
  std::lock_guard lock(SecretsMutex());
  auto& s = Secrets();
  if (std::find(s.begin(), s.end(), secret) == s.end()) s.emplace_back(secret);
}

std::string Redact(std::string_view in) {
  std::string text(in);
  for (const auto& p : kPatterns) RedactPattern(text, p);
  std::lock_guard lock(SecretsMutex());
  for (const auto& secret : Secrets()) {
    size_t pos = 0;
    while ((pos = text.find(secret, pos)) != std::string::npos) {
      text.replace(pos, secret.size(), kRedacted);
      pos += kRedacted.size();
    }
  }
  return text;
}

}  // namespace ferry
