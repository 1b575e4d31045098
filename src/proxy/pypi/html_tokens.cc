#include "proxy/pypi/html_tokens.h"

#include "base/strings.h"

#include <cstring>

namespace ferry::proxy::pypi {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }
bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAlnum(char c) { return IsAlpha(c) || IsDigit(c); }
char Lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

struct NamedEntity {
  std::string_view name;
  uint32_t code_point;
  bool legacy;  // HTML5 also decodes it without the ';'
};
constexpr NamedEntity kNamedEntities[] = {
    {"amp", '&', true},    {"lt", '<', true},     {"gt", '>', true},      {"quot", '"', true},
    {"apos", '\'', false}, {"nbsp", 0xA0, true},  {"equals", '=', false}, {"num", '#', false},
    {"sol", '/', false},   {"colon", ':', false}, {"period", '.', false}, {"comma", ',', false},
    {"excl", '!', false},  {"lpar", '(', false},  {"rpar", ')', false},   {"plus", '+', false},
};

// Decodes the reference at s[i] == '&'; appends its text and returns the index after it.
size_t DecodeOne(std::string_view s, size_t i, std::string& out) {
  size_t j = i + 1;
  if (j < s.size() && s[j] == '#') {
    ++j;
    bool hex = j < s.size() && (s[j] == 'x' || s[j] == 'X');
    if (hex) ++j;
    size_t start = j;
    uint64_t cp = 0;
    while (j < s.size()) {
      char c = s[j];
      int v = IsDigit(c)                    ? c - '0'
              : hex && c >= 'a' && c <= 'f' ? c - 'a' + 10
              : hex && c >= 'A' && c <= 'F' ? c - 'A' + 10
                                            : -1;
      if (v < 0) break;
      if (cp <= 0x10FFFF) cp = cp * (hex ? 16 : 10) + static_cast<uint64_t>(v);
      ++j;
    }
    if (j == start) {  // "&#" without digits: literal
      out.push_back('&');
      return i + 1;
    }
    if (j < s.size() && s[j] == ';') ++j;
    // HTML decodes &#0; as U+FFFD too.
    AppendUtf8(out, cp == 0 || cp > 0x10FFFF ? 0xFFFD : static_cast<uint32_t>(cp));
    return j;
  }
  size_t start = j;
  while (j < s.size() && IsAlnum(s[j]) && j - start < 16) ++j;
  std::string_view name = s.substr(start, j - start);
  bool semicolon = j < s.size() && s[j] == ';';
  for (const auto& e : kNamedEntities) {
    if (e.name != name) continue;
    if (semicolon) {
      AppendUtf8(out, e.code_point);
      return j + 1;
    }
    // Without ';' only the legacy ones, and not before '=' or an alphanumeric (HTML5's rule for
    // attribute values, which keeps "?a=1&ltb=2" intact).
    if (e.legacy && !(j < s.size() && (s[j] == '=' || IsAlnum(s[j])))) {
      AppendUtf8(out, e.code_point);
      return j;
    }
    break;
  }
  out.push_back('&');
  return i + 1;
}

constexpr size_t kMaxAttributes = 32;

bool EqualsNoCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (Lower(a[i]) != Lower(b[i])) return false;
  }
  return true;
}

bool IsRawTextElement(std::string_view name) {
  return name == "script" || name == "style" || name == "textarea" || name == "title";
}

// Index of the first case-insensitive occurrence of `needle` (lowercase) at or after `from`.
size_t FindIgnoreCase(std::string_view s, std::string_view needle, size_t from) {
  while (from < s.size()) {
    size_t lt = s.find('<', from);
    if (lt == std::string_view::npos || s.size() - lt < needle.size())
      return std::string_view::npos;
    size_t k = 0;
    while (k < needle.size() && Lower(s[lt + k]) == needle[k]) ++k;
    if (k == needle.size()) return lt;
    from = lt + 1;
  }
  return std::string_view::npos;
}

}  // namespace

static bool EqualsLower(std::string_view s, std::string_view lower) {
  if (s.size() != lower.size()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (Lower(s[i]) != lower[i]) return false;
  }
  return true;
}

std::optional<std::string_view> HtmlTag::Find(std::string_view attribute) const {
  for (const Attribute& a : attributes) {
    if (EqualsLower(a.name, attribute)) return a.value;
  }
  return std::nullopt;
}

std::string DecodeHtmlEntities(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    size_t amp = s.find('&', i);
    if (amp == std::string_view::npos) {
      out.append(s.substr(i));
      break;
    }
    out.append(s.substr(i, amp - i));
    i = DecodeOne(s, amp, out);
  }
  return out;
}

void AppendHtmlEscaped(std::string& out, std::string_view s) {
  // A plain loop: find_first_of with a set costs a memchr per byte (and an ASan interceptor
  // call each in the dev build), which was most of rendering a 20,000-file page.
  size_t i = 0, run = 0;
  for (; i < s.size(); ++i) {
    const char* entity;
    switch (s[i]) {
      case '&':
        entity = "&amp;";
        break;
      case '<':
        entity = "&lt;";
        break;
      case '>':
        entity = "&gt;";
        break;
      case '"':
        entity = "&quot;";
        break;
      case '\'':
        entity = "&#39;";
        break;
      default:
        continue;
    }
    out.append(s.data() + run, i - run);
    out.append(entity);
    run = i + 1;
  }
  out.append(s.data() + run, i - run);
}

std::string HtmlEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  AppendHtmlEscaped(out, s);
  return out;
}

void ScanHtmlTags(std::string_view html, const std::function<void(const HtmlTag&)>& on_tag) {
  const size_t n = html.size();
  size_t i = 0;
  HtmlTag tag;
  tag.decoded.reserve(kMaxAttributes + 1);
  auto decode = [&tag](std::string_view raw) -> std::string_view {
    if (raw.find('&') == std::string_view::npos) return raw;
    tag.decoded.push_back(DecodeHtmlEntities(raw));
    return tag.decoded.back();
  };
  while (i < n) {
    size_t lt = html.find('<', i);
    if (lt == std::string_view::npos || lt + 1 >= n) return;
    i = lt + 1;
    char c = html[i];
    if (c == '!') {
      if (html.substr(i, 3) == "!--") {
        size_t end = html.find("-->", i + 3);
        if (end == std::string_view::npos) return;
        i = end + 3;
      } else {
        size_t end = html.find('>', i);
        if (end == std::string_view::npos) return;
        i = end + 1;
      }
      continue;
    }
    if (c == '/' || c == '?') {
      size_t end = html.find('>', i);
      if (end == std::string_view::npos) return;
      i = end + 1;
      continue;
    }
    if (!IsAlpha(c)) continue;  // a literal '<' in text
    tag.name.clear();
    tag.attributes.clear();
    tag.decoded.clear();
    tag.text = {};
    while (i < n && !IsSpace(html[i]) && html[i] != '/' && html[i] != '>') {
      tag.name.push_back(Lower(html[i]));
      ++i;
    }
    bool closed = false;
    while (i < n) {
      while (i < n && (IsSpace(html[i]) || html[i] == '/')) ++i;
      if (i >= n) break;
      if (html[i] == '>') {
        ++i;
        closed = true;
        break;
      }
      size_t name_start = i;
      ++i;  // the first character may be '=' (HTML5)
      while (i < n && !IsSpace(html[i]) && html[i] != '/' && html[i] != '>' && html[i] != '=') {
        ++i;
      }
      std::string_view name = html.substr(name_start, i - name_start);
      while (i < n && IsSpace(html[i])) ++i;
      std::string_view raw;
      if (i < n && html[i] == '=') {
        ++i;
        while (i < n && IsSpace(html[i])) ++i;
        if (i < n && (html[i] == '"' || html[i] == '\'')) {
          size_t end = html.find(html[i], i + 1);
          if (end == std::string_view::npos) return;  // unterminated: drop the rest
          raw = html.substr(i + 1, end - i - 1);
          i = end + 1;
        } else {
          size_t start = i;
          while (i < n && !IsSpace(html[i]) && html[i] != '>') ++i;
          raw = html.substr(start, i - start);
        }
      }
      // At most kMaxAttributes are kept: a tag with a million attributes stays linear.
      if (tag.attributes.size() < kMaxAttributes) {
        bool duplicate = false;
        for (const auto& a : tag.attributes) {
          if (EqualsNoCase(a.name, name)) {
            duplicate = true;
            break;
          }
        }
        if (!duplicate) tag.attributes.push_back({name, decode(raw)});
      }
    }
    if (!closed) return;
    if (IsRawTextElement(tag.name)) {
      std::string close = "</" + tag.name;
      size_t end = FindIgnoreCase(html, close, i);
      if (end == std::string_view::npos) return;
      i = end;
    } else {
      size_t next = html.find('<', i);
      tag.text = decode(html.substr(i, next == std::string_view::npos ? n - i : next - i));
    }
    on_tag(tag);
  }
}

}  // namespace ferry::proxy::pypi
