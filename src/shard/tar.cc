#include "shard/tar.h"

#include <algorithm>
#include <cstring>

namespace ferry::shard {

namespace {

constexpr size_t kNameLen = 100, kPrefixLen = 155;
constexpr uint64_t kMaxOctalSize = (1ull << 33) - 1;  // 11 octal digits

void PutOctal(std::string& block, size_t at, size_t width, uint64_t value) {
  // width includes the terminating NUL.
  std::string digits(width - 1, '0');
  for (size_t i = width - 1; i-- > 0 && value;) {
    digits[i] = static_cast<char>('0' + (value & 7));
    value >>= 3;
  }
  std::memcpy(block.data() + at, digits.data(), digits.size());
  block[at + width - 1] = '\0';
}

bool IsAscii(std::string_view s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

// The longest prefix of at most 155 bytes that ends before a '/' and leaves at most 100 bytes.
bool SplitUstarName(std::string_view name, std::string_view* prefix, std::string_view* rest) {
  size_t limit = std::min(name.size(), kPrefixLen + 1);
  for (size_t slash = name.rfind('/', limit - 1); slash != std::string_view::npos && slash > 0;
       slash = name.rfind('/', slash - 1)) {
    if (slash <= kPrefixLen && name.size() - slash - 1 <= kNameLen && slash + 1 < name.size()) {
      *prefix = name.substr(0, slash);
      *rest = name.substr(slash + 1);
      return true;
    }
    if (name.size() - slash - 1 > kNameLen) return false;  // shorter prefixes leave more
  }
  return false;
}

std::string PaxRecord(std::string_view key, std::string_view value) {
  size_t body = 1 + key.size() + 1 + value.size() + 1;  // " key=value\n"
  size_t len = body + 1;
  while (std::to_string(len).size() + body != len) len = std::to_string(len).size() + body;
  return std::to_string(len) + " " + std::string(key) + "=" + std::string(value) + "\n";
}

std::string Block(std::string_view name, uint64_t size, char type, std::string_view prefix = {}) {
  std::string b(kTarBlock, '\0');
  std::memcpy(b.data(), name.data(), std::min(name.size(), kNameLen));
  PutOctal(b, 100, 8, 0644);
  PutOctal(b, 108, 8, 0);
  PutOctal(b, 116, 8, 0);
  PutOctal(b, 124, 12, size <= kMaxOctalSize ? size : 0);
  PutOctal(b, 136, 12, 0);
  b[156] = type;
  std::memcpy(b.data() + 257,
              "ustar\0"
              "00",
              8);
  if (!prefix.empty())
    std::memcpy(b.data() + 345, prefix.data(), std::min(prefix.size(), kPrefixLen));
  std::memset(b.data() + 148, ' ', 8);
  unsigned sum = 0;
  for (unsigned char c : b) sum += c;
  PutOctal(b, 148, 7, sum);  // six digits, NUL, then the space already there
  return b;
}

uint64_t ParseNumber(std::string_view field, bool* ok) {
  *ok = true;
  if (!field.empty() && (static_cast<unsigned char>(field[0]) & 0x80)) {  // GNU base-256
    uint64_t v = static_cast<unsigned char>(field[0]) & 0x7f;
    for (size_t i = 1; i < field.size(); ++i) v = (v << 8) | static_cast<unsigned char>(field[i]);
    return v;
  }
  uint64_t v = 0;
  size_t i = 0;
  while (i < field.size() && field[i] == ' ') ++i;
  bool any = false;
  for (; i < field.size() && field[i] >= '0' && field[i] <= '7'; ++i) {
    v = v * 8 + static_cast<uint64_t>(field[i] - '0');
    any = true;
  }
  for (; i < field.size(); ++i) {
    if (field[i] != ' ' && field[i] != '\0') *ok = false;
  }
  if (!any && field.find_first_not_of(std::string_view("\0 ", 2)) != std::string_view::npos)
    *ok = false;
  return v;
}

// Pax lengths and sizes are decimal.
uint64_t ParseDecimal(std::string_view s, bool* ok) {
  uint64_t v = 0;
  *ok = !s.empty() && s.size() <= 19;
  for (char c : s) {
    if (c < '0' || c > '9') *ok = false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  return v;
}

std::string_view CString(std::string_view field) {
  return field.substr(0, std::min(field.find('\0'), field.size()));
}

}  // namespace

std::string TarFileHeader(std::string_view name, uint64_t size) {
  std::string_view prefix, rest = name;
  bool fits = IsAscii(name) && size <= kMaxOctalSize &&
              (name.size() <= kNameLen || SplitUstarName(name, &prefix, &rest));
  if (fits) return Block(rest, size, '0', prefix);
  std::string records;
  if (!IsAscii(name) || name.size() > kNameLen || !prefix.empty() || rest != name)
    records += PaxRecord("path", name);
  if (size > kMaxOctalSize) records += PaxRecord("size", std::to_string(size));
  std::string out = Block("././@PaxHeader", records.size(), 'x');
  out += records;
  out += TarPadding(records.size());
  // The ustar block keeps a truncated ASCII-safe name for readers without pax support.
  std::string fallback(name.substr(0, kNameLen));
  out += Block(fallback, size, '0');
  return out;
}

std::string TarPadding(uint64_t size) {
  return std::string((kTarBlock - size % kTarBlock) % kTarBlock, '\0');
}

std::string TarEnd() { return std::string(2 * kTarBlock, '\0'); }

uint64_t TarEntrySize(std::string_view name, uint64_t size) {
  return TarFileHeader(name, size).size() + size + TarPadding(size).size();
}

Status TarParser::Fail(const std::string& what, uint64_t at) const {
  return Status(StatusCode::kDataLoss, "corrupt tar at offset " + std::to_string(at) + ": " + what);
}

Status TarParser::OnHeader() {
  const uint64_t at = offset_ - kTarBlock;
  if (header_.find_first_not_of('\0') == std::string::npos) {
    if (++zero_blocks_ == 2) state_ = State::kEnd;
    return Status();
  }
  if (zero_blocks_ > 0) return Fail("a header follows a zero block", at);
  bool ok = false;
  uint64_t stored = ParseNumber(std::string_view(header_).substr(148, 8), &ok);
  unsigned usum = 0;
  int ssum = 0;
  for (size_t i = 0; i < kTarBlock; ++i) {
    unsigned char c = (i >= 148 && i < 156) ? ' ' : static_cast<unsigned char>(header_[i]);
    usum += c;
    ssum += static_cast<signed char>(c);
  }
  if (!ok || (stored != usum && static_cast<int64_t>(stored) != ssum)) {
    return Fail("header checksum mismatch (not a tar file, or damaged)", at);
  }
  if (!entry_started_) {
    entry_start_ = at;
    entry_started_ = true;
  }
  std::string_view h(header_);
  uint64_t size = ParseNumber(h.substr(124, 12), &ok);
  if (!ok) return Fail("unparsable size field", at);
  char type = h[156];
  if (type == 'x' || type == 'g' || type == 'L' || type == 'K') {
    if (size > (16u << 20)) return Fail("extended header larger than 16 MiB", at);
    meta_type_ = type;
    meta_.clear();
    remaining_ = size;
    padding_after_ = TarPadding(size).size();
    state_ = State::kMeta;
    return Status();
  }
  if (pending_size_) size = *pending_size_;
  skip_data_ = !(type == '0' || type == '\0' || type == '7');
  TarEntry e;
  if (!pending_name_.empty()) {
    e.name = pending_name_;
  } else {
    std::string_view prefix = CString(h.substr(345, kPrefixLen));
    e.name = prefix.empty()
                 ? std::string(CString(h.substr(0, kNameLen)))
                 : std::string(prefix) + "/" + std::string(CString(h.substr(0, kNameLen)));
  }
  pending_name_.clear();
  pending_size_.reset();
  entry_started_ = false;
  e.size = size;
  e.header_offset = entry_start_;
  e.data_offset = offset_;
  remaining_ = size;
  padding_after_ = TarPadding(size).size();
  state_ = State::kData;
  if (!skip_data_ && cb_.on_entry) FERRY_RETURN_IF_ERROR(cb_.on_entry(e));
  return Status();
}

Status TarParser::Feed(std::string_view data) {
  while (!data.empty()) {
    switch (state_) {
      case State::kEnd:
        offset_ += data.size();  // trailing record padding
        return Status();
      case State::kHeader: {
        size_t n = std::min<size_t>(kTarBlock - header_.size(), data.size());
        header_.append(data.substr(0, n));
        data.remove_prefix(n);
        offset_ += n;
        if (header_.size() == kTarBlock) {
          Status s = OnHeader();
          header_.clear();
          FERRY_RETURN_IF_ERROR(s);
        }
        break;
      }
      case State::kMeta: {
        size_t n = static_cast<size_t>(std::min<uint64_t>(remaining_, data.size()));
        meta_.append(data.substr(0, n));
        data.remove_prefix(n);
        offset_ += n;
        remaining_ -= n;
        break;
      }
      case State::kData: {
        size_t n = static_cast<size_t>(std::min<uint64_t>(remaining_, data.size()));
        if (n > 0 && !skip_data_ && cb_.on_data)
          FERRY_RETURN_IF_ERROR(cb_.on_data(data.substr(0, n)));
        data.remove_prefix(n);
        offset_ += n;
        remaining_ -= n;
        break;
      }
      case State::kPadding: {
        size_t n = static_cast<size_t>(std::min<uint64_t>(remaining_, data.size()));
        data.remove_prefix(n);
        offset_ += n;
        remaining_ -= n;
        if (remaining_ == 0) state_ = State::kHeader;
        break;
      }
    }
    // Section ends (also for empty sections, hence outside the data loop above).
    if (remaining_ == 0 && state_ == State::kData) {
      if (!skip_data_ && cb_.on_end_of_entry) FERRY_RETURN_IF_ERROR(cb_.on_end_of_entry());
      remaining_ = padding_after_;
      state_ = remaining_ ? State::kPadding : State::kHeader;
    } else if (remaining_ == 0 && state_ == State::kMeta) {
      if (meta_type_ == 'L') {
        pending_name_ = std::string(CString(meta_));
      } else if (meta_type_ == 'x') {
        std::string_view m(meta_);
        while (!m.empty()) {
          size_t sp = m.find(' ');
          bool ok = false;
          uint64_t len = sp == std::string_view::npos ? 0 : ParseDecimal(m.substr(0, sp), &ok);
          if (!ok || len <= sp || len > m.size()) return Fail("bad pax record", offset_);
          std::string_view rec = m.substr(sp + 1, len - sp - 2);  // without the '\n'
          size_t eq = rec.find('=');
          if (eq != std::string_view::npos) {
            if (rec.substr(0, eq) == "path") pending_name_ = std::string(rec.substr(eq + 1));
            if (rec.substr(0, eq) == "size") {
              uint64_t v = ParseDecimal(rec.substr(eq + 1), &ok);
              if (!ok) return Fail("bad pax size", offset_);
              pending_size_ = v;
            }
          }
          m.remove_prefix(len);
        }
      }
      meta_.clear();
      remaining_ = padding_after_;
      state_ = remaining_ ? State::kPadding : State::kHeader;
    }
  }
  return Status();
}

Status TarParser::Finish() {
  if (state_ == State::kEnd || (state_ == State::kHeader && header_.empty() && !entry_started_)) {
    return Status();
  }
  return Status(StatusCode::kDataLoss, "truncated tar: the data ends at offset " +
                                           std::to_string(offset_) + " inside an entry");
}

}  // namespace ferry::shard
