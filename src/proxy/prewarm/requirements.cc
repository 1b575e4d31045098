#include "proxy/prewarm/requirements.h"

#include <algorithm>

#include "base/strings.h"

namespace ferry::proxy::prewarm {

namespace {

std::string NormalizeProject(std::string_view name) {
  std::string out;
  bool sep = false;
  for (char c : name) {
    if (c == '-' || c == '_' || c == '.') {
      sep = true;
      continue;
    }
    if (sep && !out.empty()) out += '-';
    sep = false;
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

bool IsNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
}

}  // namespace

std::vector<Requirement> ParseRequirements(std::string_view text,
                                           std::vector<std::string>* skipped) {
  std::vector<Requirement> out;
  // Logical lines: comments dropped, `\` continuations joined; each keeps its first line number.
  std::vector<std::pair<int, std::string>> lines;
  std::string current;
  int number = 0, start = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = std::min(text.find('\n', pos), text.size());
    std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++number;
    if (current.empty()) start = number;
    if (line.starts_with("#")) line = {};
    if (size_t hash = line.find(" #"); hash != std::string_view::npos) line = line.substr(0, hash);
    std::string_view t = Trim(line);
    bool continues = t.ends_with("\\");
    if (continues) t.remove_suffix(1);
    current += std::string(t) + " ";
    if (!continues) {
      lines.emplace_back(start, std::move(current));
      current.clear();
    }
  }
  if (!Trim(current).empty()) lines.emplace_back(start, std::move(current));
  for (auto& [line_no, line] : lines) {
    std::string_view t = Trim(line);
    if (t.empty()) continue;
    auto skip = [&, n = line_no](std::string_view why) {
      if (skipped) skipped->push_back("line " + std::to_string(n) + ": " + std::string(why));
    };
    if (t.starts_with("-") || t.find("://") != std::string_view::npos || t.starts_with(".") ||
        t.starts_with("/")) {
      skip("'" + std::string(t.substr(0, 80)) + "' is an option, URL or path (not prewarmed)");
      continue;
    }
    size_t end = 0;
    while (end < t.size() && IsNameChar(t[end])) ++end;
    if (end == 0) {
      skip("'" + std::string(t.substr(0, 80)) + "' does not start with a project name");
      continue;
    }
    Requirement r{.project = NormalizeProject(t.substr(0, end)), .version = "", .line = line_no};
    std::string_view spec = t.substr(end);
    if (spec.starts_with("[")) {
      size_t close = spec.find(']');
      spec = close == std::string_view::npos ? std::string_view() : spec.substr(close + 1);
    }
    if (size_t semi = spec.find(';'); semi != std::string_view::npos) spec = spec.substr(0, semi);
    if (size_t opt = spec.find(" --"); opt != std::string_view::npos) spec = spec.substr(0, opt);
    spec = Trim(spec);
    if (spec.starts_with("==") && spec.find(',') == std::string_view::npos &&
        spec.find('*') == std::string_view::npos) {
      r.version = std::string(Trim(spec.substr(2)));
    } else if (!spec.empty() && !spec.starts_with("--")) {
      skip("'" + std::string(spec) + "' is not an exact pin: the newest version of " + r.project +
           " is prewarmed");
    }
    out.push_back(std::move(r));
  }
  return out;
}

std::optional<std::string> VersionOfFilename(std::string_view f) {
  std::string_view stem;
  if (f.ends_with(".whl")) {
    stem = f.substr(0, f.size() - 4);
    size_t a = stem.find('-');
    if (a == std::string_view::npos) return std::nullopt;
    size_t b = stem.find('-', a + 1);
    if (b == std::string_view::npos) return std::nullopt;
    return std::string(stem.substr(a + 1, b - a - 1));
  }
  for (std::string_view ext : {".tar.gz", ".zip", ".tar.bz2"}) {
    if (f.ends_with(ext)) stem = f.substr(0, f.size() - ext.size());
  }
  if (stem.empty()) return std::nullopt;
  size_t dash = stem.rfind('-');
  if (dash == std::string_view::npos || dash + 1 == stem.size()) return std::nullopt;
  return std::string(stem.substr(dash + 1));
}

}  // namespace ferry::proxy::prewarm
