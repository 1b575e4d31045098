#include "storage/url.h"

#include <unistd.h>

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

Result<ParsedUrl> ParseS3(std::string_view rest, std::string_view url, std::string_view profile) {
  // Keys are literal (aws-cli, s5cmd, rclone): everything after "bucket/" is the key, '%', '?',
  // '#' and spaces included, so whatever `ferry ls` prints pastes back.
  ParsedUrl out;
  out.scheme = Scheme::kS3;
  out.profile = std::string(profile);
  size_t slash = rest.find('/');
  out.bucket = std::string(rest.substr(0, slash));
  if (out.bucket.empty()) {
    return InvalidArgument("malformed URL '" + RedactUrl(url) + "': no bucket name");
  }
  if (out.bucket.find('@') != std::string::npos) {
    return InvalidArgument("URL '" + RedactUrl(url) +
                           "': user:password@ is not accepted in URLs (process lists and logs "
                           "would show it); set credentials with AWS_ACCESS_KEY_ID/"
                           "AWS_SECRET_ACCESS_KEY or a profile");
  }
  if (slash != std::string_view::npos) out.key = std::string(rest.substr(slash + 1));
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
  bool web = StartsWith(lower, "http:") || StartsWith(lower, "https:");
  std::string out(web ? url.substr(0, url.find_first_of("?#")) : url);
  // A "user:pass@" in the authority (the part after "://" up to the first '/'). Only there: an
  // s3 key is literal and may hold "://" and '@' of its own.
  if (size_t sep = out.find("://"); sep != std::string::npos) {
    size_t end = out.find_first_of(web ? "/?#" : "/", sep + 3);
    size_t at = out.rfind('@', end == std::string::npos ? out.size() : end);
    if (at != std::string::npos && at > sep) out.erase(sep + 3, at + 1 - (sep + 3));
  }
  return out;
}

bool IsUrlProfileName(std::string_view name) {
  if (name.empty() || name.front() == '-') return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.' || c == '+' || c == '@';
    if (!ok) return false;
  }
  return true;
}

Result<ParsedUrl> ParseUrl(std::string_view url, std::string_view cwd) {
  size_t sep = url.find("://");
  // A '/' before "://" ("./a://b", "/x/s3://y") makes it a path, not a scheme.
  if (sep != std::string_view::npos && url.substr(0, sep).find('/') != std::string_view::npos) {
    sep = std::string_view::npos;
  }
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
  // "PROFILE:s3://bucket/key": the profile names where the bucket is (docs/semantics/urls.md).
  if (size_t colon = scheme.rfind(':'); colon != std::string::npos) {
    std::string_view profile = url.substr(0, colon);
    std::string inner = scheme.substr(colon + 1);
    if (IsUrlProfileName(profile) && inner == "s3") {
      return ParseS3(rest, url, profile);
    }
    if (IsUrlProfileName(profile) && IsKnownScheme(inner)) {
      return InvalidArgument("URL '" + RedactUrl(url) + "': a profile prefix ('" +
                             std::string(profile) + ":') applies only to s3:// URLs");
    }
  }
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
  if (scheme == "s3") return ParseS3(rest, url, {});
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

std::string FormatS3Url(std::string_view bucket, std::string_view key, std::string_view profile) {
  std::string out;
  if (!profile.empty()) out = std::string(profile) + ":";
  out += "s3://" + std::string(bucket) + "/" + std::string(key);
  return out;
}

}  // namespace ferry::storage
