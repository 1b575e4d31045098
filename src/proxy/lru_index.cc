#include "proxy/lru_index.h"

#include <charconv>

namespace ferry::proxy {

void LruIndex::Insert(const std::string& key, uint64_t size, int64_t access_ms) {
  Erase(key);
  entries_[key] = Entry{size, access_ms};
  by_access_.emplace(access_ms, key);
  total_bytes_ += size;
}

void LruIndex::Touch(const std::string& key, int64_t access_ms) {
  auto it = entries_.find(key);
  if (it == entries_.end() || access_ms <= it->second.access_ms) return;
  by_access_.erase({it->second.access_ms, key});
  it->second.access_ms = access_ms;
  by_access_.emplace(access_ms, key);
}

void LruIndex::Erase(const std::string& key) {
  auto it = entries_.find(key);
  if (it == entries_.end()) return;
  by_access_.erase({it->second.access_ms, key});
  total_bytes_ -= it->second.size;
  entries_.erase(it);
}

std::vector<std::string> LruIndex::Victims(
    uint64_t cap_bytes, const std::function<bool(const std::string&)>& pinned) const {
  std::vector<std::string> out;
  uint64_t total = total_bytes_;
  for (auto it = by_access_.begin(); it != by_access_.end() && total > cap_bytes; ++it) {
    if (pinned && pinned(it->second)) continue;
    total -= entries_.at(it->second).size;
    out.push_back(it->second);
  }
  return out;
}

std::string LruIndex::SerializeAccessTimes() const {
  std::string out;
  for (const auto& [key, e] : entries_) {
    out += key;
    out += '\t';
    out += std::to_string(e.access_ms);
    out += '\n';
  }
  return out;
}

void LruIndex::ApplyAccessTimes(std::string_view text) {
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    size_t tab = line.find('\t');
    if (tab == std::string_view::npos) continue;
    int64_t ms = 0;
    std::string_view num = line.substr(tab + 1);
    auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), ms);
    if (ec != std::errc() || p != num.data() + num.size()) continue;
    Touch(std::string(line.substr(0, tab)), ms);
  }
}

}  // namespace ferry::proxy
