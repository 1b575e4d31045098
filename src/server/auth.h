#pragma once
// Bearer-token checks for the server (ServerOptions::tokens). Tokens are secrets: they are
// compared in constant time and never logged or put in a message.

#include <string>
#include <string_view>
#include <vector>

namespace ferry::server {

// kOk: a token of `tokens` (may read and write); kReadOnly: a token of `read_tokens` only.
enum class AuthResult { kOk, kReadOnly, kMissing, kInvalid };

// Checks an Authorization header value ("Bearer <token>"; the scheme is case-insensitive)
// against `tokens` (read-write) and `read_tokens` (read-only). Every token of both lists is
// compared, each in time that depends only on the lengths.
AuthResult CheckBearer(std::string_view authorization, const std::vector<std::string>& tokens,
                       const std::vector<std::string>& read_tokens = {});

// True when a == b, in time that depends only on the lengths.
bool ConstantTimeEquals(std::string_view a, std::string_view b);

}  // namespace ferry::server
