#include "storage/url.h"

#include <unistd.h>

#include <set>

#include "base/strings.h"

namespace ferry::storage {

namespace {

std::string CurrentDir() {
  char buf[4096];
  if (getcwd(buf, sizeof buf) == nullptr) return "/";
  return buf;
}

Result<ParsedUrl> ParseLocal(std::string_view path, std::string_view cwd, std::string_view url) {
  if (path.empty()) return InvalidArgument("empty path");
  if (path.find('\0') != std::string_view::npos) {
    return InvalidArgument("path '" + std::string(url) + "' contains a NUL byte");
  }
  std::string abs;
  if (path.front() == '/') {
    abs = std::string(path);
  } else {
    abs = cwd.empty() ? CurrentDir() : std::string(cwd);
    if (abs.back() != '/') abs.push_back('/');
    abs += path;
  }
  ParsedUrl out;
  out.scheme = Scheme::kLocal;
  out.trailing_slash = abs.size() > 1 && abs.back() == '/';
  // Normalise: drop empty and "." segments, resolve "..".
  std::vector<std::string_view> parts;
  for (auto seg : Split(abs, '/')) {
    if (seg.empty() || seg == ".") continue;
    if (seg == "..") {
      if (!parts.empty()) parts.pop_back();
      continue;
    }
    parts.push_back(seg);
  }
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out.key.push_back('/');
    out.key += parts[i];
  }
  if (out.trailing_slash && !out.key.empty()) out.key.push_back('/');
  return out;
}

Result<ParsedUrl> ParseS3(std::string_view rest, std::string_view url) {
  static const std::set<std::string, std::less<>> kParams = {"endpoint", "region", "addressing",
                                                             "profile", "anonymous"};
  ParsedUrl out;
  out.scheme = Scheme::kS3;
  std::string_view query;
  if (size_t q = rest.find('?'); q != std::string_view::npos) {
    query = rest.substr(q + 1);
    rest = rest.substr(0, q);
  }
  if (rest.find('#') != std::string_view::npos) {
    return InvalidArgument("malformed URL '" + RedactUrl(url) +
                           "': '#' in a key must be written %23");
  }
  size_t slash = rest.find('/');
  out.bucket = std::string(rest.substr(0, slash));
  if (out.bucket.empty()) {
    return InvalidArgument("malformed URL '" + RedactUrl(url) + "': no bucket name");
  }
  std::string_view raw_key = slash == std::string_view::npos ? "" : rest.substr(slash + 1);
  auto key = PercentDecode(raw_key);
  if (!key) {
    return InvalidArgument("malformed URL '" + RedactUrl(url) +
                           "': invalid percent-escape in key (write a literal '%' as %25)");
  }
  out.key = std::move(*key);
  if (out.key.find('\0') != std::string::npos) {
    return InvalidArgument("malformed URL '" + RedactUrl(url) +
                           "': S3 keys cannot hold a NUL byte");
  }
  if (out.key.size() > 1024) {
    return InvalidArgument("malformed URL '" + RedactUrl(url).substr(0, 80) +
                           "...': S3 keys are at most 1024 bytes, this one has " +
                           std::to_string(out.key.size()));
  }
  out.trailing_slash = !out.key.empty() && out.key.back() == '/';
  if (!query.empty()) {
    for (auto pair : Split(query, '&')) {
      size_t eq = pair.find('=');
      std::string name(pair.substr(0, eq));
      if (!kParams.contains(name)) {
        if (name == "access_key" || name == "secret_key" || name == "session_token") {
          return InvalidArgument(
              "credentials are never taken from URLs or arguments; set "
              "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or use a profile");
        }
        return InvalidArgument("unknown parameter '" + name + "' in URL '" +
                               RedactUrl(url.substr(0, url.find('?'))) +
                               "' (known: endpoint, region, addressing, profile, anonymous; a "
                               "'?' in a key must be written %3F)");
      }
      if (eq == std::string_view::npos) {
        return InvalidArgument("parameter '" + name + "' needs a value (" + name + "=...)");
      }
      auto value = PercentDecode(pair.substr(eq + 1));
      if (!value) return InvalidArgument("parameter '" + name + "' has a bad percent-escape");
      if (name == "endpoint") {
        std::string_view v = *value;
        size_t sep = v.find("://");
        std::string_view authority = v.substr(sep == std::string_view::npos ? 0 : sep + 3);
        authority = authority.substr(0, authority.find('/'));
        if (authority.find('@') != std::string_view::npos) {
          return InvalidArgument("URL '" + RedactUrl(url) +
                                 "': the endpoint must not contain user:password@; set "
                                 "credentials with AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or a "
                                 "profile");
        }
      }
      if (name == "anonymous" && *value != "true" && *value != "false") {
        return InvalidArgument("parameter 'anonymous' must be true or false");
      }
      out.params[name] = *value;
    }
  }
  return out;
}

bool IsKnownScheme(std::string_view lower) {
  return lower == "s3" || lower == "file" || lower == "http" || lower == "https";
}

Result<ParsedUrl> ParseHttp(Scheme scheme, std::string_view rest, std::string_view url) {
  ParsedUrl out;
  out.scheme = scheme;
  rest = rest.substr(0, rest.find('#'));  // fragments are never sent
  if (size_t q = rest.find('?'); q != std::string_view::npos) {
    out.query = std::string(rest.substr(q + 1));
    rest = rest.substr(0, q);
  }
  size_t slash = rest.find('/');
  out.bucket = std::string(rest.substr(0, slash));
  if (out.bucket.find('@') != std::string::npos) {
    return InvalidArgument("URL '" + RedactUrl(url) +
                           "': user:password@ is not accepted in URLs (process lists and logs "
                           "would show it); use a presigned URL");
  }
  if (out.bucket.empty()) return InvalidArgument("malformed URL '" + RedactUrl(url) + "': no host");
  if (slash != std::string_view::npos) out.key = std::string(rest.substr(slash + 1));
  out.trailing_slash = !out.key.empty() && out.key.back() == '/';
  return out;
}

}  // namespace

std::string RedactUrl(std::string_view url) {
  std::string lower = ToLower(url.substr(0, std::min<size_t>(url.size(), 8)));
  std::string out(StartsWith(lower, "http:") || StartsWith(lower, "https:")
                      ? url.substr(0, url.find_first_of("?#"))
                      : url);
  // Every "scheme://user:pass@host" in it (an s3:// URL's endpoint parameter holds one too).
  for (size_t sep = out.find("://"); sep != std::string::npos; sep = out.find("://", sep + 3)) {
    size_t end = out.find_first_of("/?&#", sep + 3);
    size_t at = out.rfind('@', end == std::string::npos ? out.size() : end);
    if (at != std::string::npos && at > sep) out.erase(sep + 3, at + 1 - (sep + 3));
  }
  return out;
}

Result<ParsedUrl> ParseUrl(std::string_view url, std::string_view cwd) {
  size_t sep = url.find("://");
  if (sep == std::string_view::npos) {
    // A known scheme and a colon without "//" is a typo, not a relative path named "s3:".
    size_t colon = url.find(':');
    if (colon != std::string_view::npos && IsKnownScheme(ToLower(url.substr(0, colon)))) {
      std::string scheme = ToLower(url.substr(0, colon));
      std::string_view rest = url.substr(colon + 1);
      if (scheme == "file" && StartsWith(rest, "/")) {
        auto path = PercentDecode(rest);
        if (!path) {
          return InvalidArgument("malformed URL '" + RedactUrl(url) + "': invalid percent-escape");
        }
        return ParseLocal(*path, cwd, url);
      }
      return InvalidArgument("malformed URL '" + RedactUrl(url) + "': write " + scheme + "://" +
                             (scheme == "s3"     ? "BUCKET/KEY"
                              : scheme == "file" ? "/PATH"
                                                 : "HOST/PATH") +
                             " (for a local path that starts with '" + scheme + ":', write ./" +
                             RedactUrl(url) + ")");
    }
    return ParseLocal(url, cwd, url);
  }
  std::string scheme = ToLower(url.substr(0, sep));
  std::string_view rest = url.substr(sep + 3);
  if (scheme == "file") {
    size_t slash = rest.find('/');
    std::string_view host = rest.substr(0, slash);
    if (!host.empty() && host != "localhost") {
      return InvalidArgument("file URL '" + RedactUrl(url) + "' names host '" + std::string(host) +
                             "'; only local files work");
    }
    if (slash == std::string_view::npos)
      return InvalidArgument("file URL '" + RedactUrl(url) + "' has no path");
    auto path = PercentDecode(rest.substr(slash));
    if (!path)
      return InvalidArgument("malformed URL '" + RedactUrl(url) + "': invalid percent-escape");
    return ParseLocal(*path, cwd, url);
  }
  if (scheme == "s3") return ParseS3(rest, url);
  if (scheme == "http" || scheme == "https") {
    return ParseHttp(scheme == "http" ? Scheme::kHttp : Scheme::kHttps, rest, url);
  }
  return InvalidArgument("unknown URL scheme '" + scheme + "' in '" +
                         RedactUrl(url.substr(0, sep + 3)) +
                         "...' (supported: a path, "
                         "file://, s3://, http://, https://)");
}

std::string KeyBaseName(std::string_view key) {
  while (!key.empty() && key.back() == '/') key.remove_suffix(1);
  size_t slash = key.rfind('/');
  return std::string(slash == std::string_view::npos ? key : key.substr(slash + 1));
}

std::string DirectoryPrefix(std::string key) {
  if (!key.empty() && key.back() != '/') key.push_back('/');
  return key;
}

std::string FormatS3Url(std::string_view bucket, std::string_view key) {
  std::string out = "s3://" + std::string(bucket) + "/";
  for (unsigned char c : key) {
    if (c == '%' || c == '?' || c == '#' || c < 0x20 || c == 0x7f) {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  return out;
}

}  // namespace ferry::storage
