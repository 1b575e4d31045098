#include "proxy/pypi/json_reader.h"

#include "base/strings.h"

namespace ferry::proxy::pypi {
namespace {

class Parser {
 public:
  Parser(std::string_view text, int max_depth, JsonDocument& doc)
      : s_(text), max_depth_(max_depth), doc_(doc) {}

  Status Run() {
    if (!Value(doc_.root, 0)) return Error();
    SkipSpace();
    if (i_ != s_.size()) {
      error_ = "unexpected text after the value";
      return Error();
    }
    return Status();
  }

 private:
  Status Error() const {
    return InvalidArgument("malformed JSON at byte " + std::to_string(i_) + ": " + error_);
  }

  bool Fail(const char* why) {
    if (error_.empty()) error_ = why;
    return false;
  }

  void SkipSpace() {
    while (i_ < s_.size() &&
           (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t')) {
      ++i_;
    }
  }

  bool Literal(std::string_view word) {
    if (s_.substr(i_, word.size()) != word) return Fail("unknown literal");
    i_ += word.size();
    return true;
  }

  bool Value(JsonValue& v, int depth) {
    SkipSpace();
    if (i_ >= s_.size()) return Fail("unexpected end");
    char c = s_[i_];
    switch (c) {
      case '{':
        return Object(v, depth + 1);
      case '[':
        return Array(v, depth + 1);
      case '"':
        v.type = JsonValue::Type::kString;
        return String(v.text);
      case 't':
        v.type = JsonValue::Type::kBool;
        v.boolean = true;
        return Literal("true");
      case 'f':
        v.type = JsonValue::Type::kBool;
        return Literal("false");
      case 'n':
        v.type = JsonValue::Type::kNull;
        return Literal("null");
      default:
        return Number(v);
    }
  }

  bool Number(JsonValue& v) {
    size_t start = i_;
    if (i_ < s_.size() && s_[i_] == '-') ++i_;
    size_t digits = i_;
    while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
    if (i_ == digits) return Fail("unexpected character");
    if (s_[digits] == '0' && i_ - digits > 1) return Fail("leading zero");
    if (i_ < s_.size() && s_[i_] == '.') {
      size_t frac = ++i_;
      while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
      if (i_ == frac) return Fail("bad number");
    }
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      ++i_;
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
      size_t exp = i_;
      while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
      if (i_ == exp) return Fail("bad number");
    }
    v.type = JsonValue::Type::kNumber;
    v.text = s_.substr(start, i_ - start);
    return true;
  }

  bool Hex4(uint32_t& out) {
    if (s_.size() - i_ < 4) return Fail("bad \\u escape");
    out = 0;
    for (int k = 0; k < 4; ++k) {
      char c = s_[i_++];
      int d = c >= '0' && c <= '9'   ? c - '0'
              : c >= 'a' && c <= 'f' ? c - 'a' + 10
              : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                     : -1;
      if (d < 0) return Fail("bad \\u escape");
      out = out * 16 + static_cast<uint32_t>(d);
    }
    return true;
  }

  bool String(std::string_view& out) {
    ++i_;  // '"'
    size_t start = i_;
    while (i_ < s_.size()) {
      unsigned char c = static_cast<unsigned char>(s_[i_]);
      if (c == '"') {
        out = s_.substr(start, i_ - start);
        ++i_;
        return true;
      }
      if (c == '\\') break;
      if (c < 0x20) return Fail("control character in string");
      ++i_;
    }
    if (i_ >= s_.size()) return Fail("unterminated string");
    std::string& decoded = doc_.decoded.emplace_back(s_.substr(start, i_ - start));
    while (i_ < s_.size()) {
      unsigned char c = static_cast<unsigned char>(s_[i_]);
      if (c == '"') {
        ++i_;
        out = decoded;
        return true;
      }
      if (c < 0x20) return Fail("control character in string");
      if (c != '\\') {
        decoded.push_back(static_cast<char>(c));
        ++i_;
        continue;
      }
      if (++i_ >= s_.size()) break;
      char e = s_[i_++];
      switch (e) {
        case '"':
          decoded.push_back('"');
          break;
        case '\\':
          decoded.push_back('\\');
          break;
        case '/':
          decoded.push_back('/');
          break;
        case 'b':
          decoded.push_back('\b');
          break;
        case 'f':
          decoded.push_back('\f');
          break;
        case 'n':
          decoded.push_back('\n');
          break;
        case 'r':
          decoded.push_back('\r');
          break;
        case 't':
          decoded.push_back('\t');
          break;
        case 'u': {
          uint32_t cp;
          if (!Hex4(cp)) return false;
          if (cp >= 0xD800 && cp <= 0xDBFF && s_.substr(i_, 2) == "\\u") {
            size_t save = i_;
            i_ += 2;
            uint32_t low;
            if (!Hex4(low)) return false;
            if (low >= 0xDC00 && low <= 0xDFFF) {
              cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
            } else {
              i_ = save;  // not a pair: the high one alone is replaced
              cp = 0xFFFD;
            }
          } else if (cp >= 0xD800 && cp <= 0xDFFF) {
            cp = 0xFFFD;  // a lone surrogate
          }
          AppendUtf8(decoded, cp);
          break;
        }
        default:
          return Fail("bad escape");
      }
    }
    return Fail("unterminated string");
  }

  bool Array(JsonValue& v, int depth) {
    if (depth > max_depth_) return Fail("nested too deep");
    v.type = JsonValue::Type::kArray;
    ++i_;  // '['
    SkipSpace();
    if (i_ < s_.size() && s_[i_] == ']') {
      ++i_;
      return true;
    }
    while (true) {
      if (!Value(v.children.emplace_back().value, depth)) return false;
      SkipSpace();
      if (i_ >= s_.size()) return Fail("unterminated array");
      if (s_[i_] == ',') {
        ++i_;
        continue;
      }
      if (s_[i_] == ']') {
        ++i_;
        return true;
      }
      return Fail("expected ',' or ']'");
    }
  }

  bool Object(JsonValue& v, int depth) {
    if (depth > max_depth_) return Fail("nested too deep");
    v.type = JsonValue::Type::kObject;
    v.children.reserve(4);
    ++i_;  // '{'
    SkipSpace();
    if (i_ < s_.size() && s_[i_] == '}') {
      ++i_;
      return true;
    }
    while (true) {
      SkipSpace();
      if (i_ >= s_.size() || s_[i_] != '"') return Fail("expected a key");
      JsonMember& m = v.children.emplace_back();
      if (!String(m.key)) return false;
      SkipSpace();
      if (i_ >= s_.size() || s_[i_] != ':') return Fail("expected ':'");
      ++i_;
      if (!Value(m.value, depth)) return false;
      SkipSpace();
      if (i_ >= s_.size()) return Fail("unterminated object");
      if (s_[i_] == ',') {
        ++i_;
        continue;
      }
      if (s_[i_] == '}') {
        ++i_;
        return true;
      }
      return Fail("expected ',' or '}'");
    }
  }

  std::string_view s_;
  int max_depth_;
  JsonDocument& doc_;
  size_t i_ = 0;
  std::string error_;
};

}  // namespace

const JsonValue* JsonValue::Find(std::string_view key) const {
  if (type != Type::kObject) return nullptr;
  for (size_t k = children.size(); k-- > 0;) {
    if (children[k].key == key) return &children[k].value;
  }
  return nullptr;
}

std::optional<uint64_t> JsonValue::AsUint64() const {
  if (type != Type::kNumber || text.empty() || text.size() > 20) return std::nullopt;
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    uint64_t next = v * 10 + static_cast<uint64_t>(c - '0');
    if (next / 10 != v) return std::nullopt;  // overflow
    v = next;
  }
  return v;
}

Status ParseJson(std::string_view text, int max_depth, JsonDocument& doc) {
  doc = JsonDocument();
  return Parser(text, max_depth, doc).Run();
}

}  // namespace ferry::proxy::pypi
