#include "server/auth.h"

#include "base/hash.h"
#include "base/strings.h"

namespace ferry::server {

namespace {

// "Scheme rest" with a case-insensitive scheme; the rest trimmed, or nullopt.
std::optional<std::string_view> AfterScheme(std::string_view value, std::string_view scheme) {
  if (value.size() <= scheme.size() || value[scheme.size()] != ' ' ||
      !EqualsIgnoreCase(value.substr(0, scheme.size()), scheme)) {
    return std::nullopt;
  }
  return Trim(value.substr(scheme.size() + 1));
}

}  // namespace

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

std::optional<Principal> TokenPrincipal(std::string_view token,
                                        const std::vector<std::string>& tokens,
                                        const std::vector<std::string>& read_tokens) {
  bool write = false;
  bool read = false;
  for (const std::string& t : tokens) write |= ConstantTimeEquals(token, t);
  for (const std::string& t : read_tokens) read |= ConstantTimeEquals(token, t);
  if (token.empty()) return std::nullopt;
  if (write) return Principal::kWriter;
  if (read) return Principal::kReader;
  return std::nullopt;
}

std::string CookieValueFor(std::string_view token) {
  return "v1." + HexEncode(HmacSha256(AsBytes(token), "ferry web UI sign-in cookie"));
}

std::optional<Principal> CredentialPrincipal(const Credential& credential,
                                             const std::vector<std::string>& tokens,
                                             const std::vector<std::string>& read_tokens) {
  switch (credential.source) {
    case CredentialSource::kNone:
      return std::nullopt;
    case CredentialSource::kBearer:
    case CredentialSource::kBasic:
      return TokenPrincipal(credential.token, tokens, read_tokens);
    case CredentialSource::kCookie: {
      bool match = false;
      for (const auto* list : {&tokens, &read_tokens}) {
        for (const std::string& t : *list)
          match |= ConstantTimeEquals(credential.token, CookieValueFor(t));
      }
      if (match) return Principal::kReader;
      return std::nullopt;
    }
  }
  return std::nullopt;
}

Credential FindCredential(const Headers& headers) {
  Credential c;
  if (auto auth = headers.Get("Authorization")) {
    std::string_view value = Trim(*auth);
    if (auto bearer = AfterScheme(value, "Bearer")) {
      if (!bearer->empty()) {
        c.source = CredentialSource::kBearer;
        c.token = std::string(*bearer);
        return c;
      }
    } else if (auto basic = AfterScheme(value, "Basic")) {
      if (auto decoded = Base64Decode(*basic)) {
        // RFC 7617: user-id ":" password. pip sends the URL's userinfo; a token given as the
        // user name alone (http://TOKEN@nas/) arrives as "TOKEN:".
        std::string_view pair = *decoded;
        size_t colon = pair.find(':');
        std::string_view user = pair.substr(0, colon);
        std::string_view password =
            colon == std::string_view::npos ? std::string_view() : pair.substr(colon + 1);
        std::string_view token = password.empty() ? user : password;
        if (!token.empty()) {
          c.source = CredentialSource::kBasic;
          c.token = std::string(token);
          return c;
        }
      }
    }
    c.unreadable_authorization = true;
  }
  if (auto cookie = headers.Get("Cookie")) {
    if (auto token = TokenFromCookie(*cookie)) {
      c.source = CredentialSource::kCookie;
      c.token = std::move(*token);
    }
  }
  return c;
}

namespace {

// Calls fn(name, value, pair) for each "name=value" of a Cookie header (RFC 6265 5.4: pairs
// separated by ";").
template <typename Fn>
void ForEachCookie(std::string_view header, Fn fn) {
  while (!header.empty()) {
    size_t end = header.find(';');
    std::string_view pair = Trim(header.substr(0, end));
    header = end == std::string_view::npos ? "" : header.substr(end + 1);
    size_t eq = pair.find('=');
    if (eq == std::string_view::npos) {
      fn(std::string_view(), std::string_view(), pair);
      continue;
    }
    fn(Trim(pair.substr(0, eq)), Trim(pair.substr(eq + 1)), pair);
  }
}

}  // namespace

std::optional<std::string> TokenFromCookie(std::string_view cookie_header) {
  std::optional<std::string> found;
  ForEachCookie(cookie_header,
                [&](std::string_view name, std::string_view value, std::string_view) {
                  if (found || name != kTokenCookie) return;
                  auto decoded = PercentDecode(value);
                  if (decoded && !decoded->empty()) found = std::move(decoded);
                });
  return found;
}

std::string CookieWithoutToken(std::string_view cookie_header) {
  std::string out;
  ForEachCookie(cookie_header, [&](std::string_view name, std::string_view, std::string_view pair) {
    if (name == kTokenCookie || pair.empty()) return;
    if (!out.empty()) out += "; ";
    out += pair;
  });
  return out;
}

}  // namespace ferry::server
