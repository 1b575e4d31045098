#include "server/auth.h"

#include "base/strings.h"

namespace ferry::server {

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  size_t n = a.size() > b.size() ? a.size() : b.size();
  for (size_t i = 0; i < n; ++i) {
    unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= static_cast<unsigned char>(x ^ y);
  }
  return diff == 0;
}

AuthResult CheckBearer(std::string_view authorization, const std::vector<std::string>& tokens,
                       const std::vector<std::string>& read_tokens) {
  authorization = Trim(authorization);
  if (authorization.empty()) return AuthResult::kMissing;
  constexpr std::string_view kScheme = "bearer ";
  if (authorization.size() <= kScheme.size() ||
      !EqualsIgnoreCase(authorization.substr(0, kScheme.size()), kScheme)) {
    return AuthResult::kInvalid;
  }
  std::string_view token = Trim(authorization.substr(kScheme.size()));
  bool write = false;
  bool read = false;
  for (const std::string& t : tokens) write |= ConstantTimeEquals(token, t);
  for (const std::string& t : read_tokens) read |= ConstantTimeEquals(token, t);
  if (token.empty()) return AuthResult::kInvalid;
  if (write) return AuthResult::kOk;
  return read ? AuthResult::kReadOnly : AuthResult::kInvalid;
}

}  // namespace ferry::server
