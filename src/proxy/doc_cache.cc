#include "proxy/doc_cache.h"

#include <nlohmann/json.hpp>

#include "base/hash.h"
#include "base/log.h"

namespace ferry::proxy {

std::string EncodeDoc(std::string_view key, const Doc& doc) {
  nlohmann::json head = {{"key", key}, {"fetched_ms", doc.fetched_ms}, {"fields", doc.fields}};
  return head.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n" + doc.body;
}

std::optional<Doc> DecodeDoc(std::string_view key, std::string_view data) {
  size_t nl = data.find('\n');
  if (nl == std::string_view::npos) return std::nullopt;
  auto head = nlohmann::json::parse(data.substr(0, nl), nullptr, /*allow_exceptions=*/false);
  if (!head.is_object() || !head.contains("key") || !head["key"].is_string() ||
      head["key"].get<std::string>() != key) {
    return std::nullopt;
  }
  Doc doc;
  if (auto it = head.find("fetched_ms"); it != head.end() && it->is_number_integer()) {
    doc.fetched_ms = it->get<int64_t>();
  }
  if (auto it = head.find("fields"); it != head.end() && it->is_object()) {
    for (auto& [k, v] : it->items()) {
      if (v.is_string()) doc.fields[k] = v.get<std::string>();
    }
  }
  doc.body = std::string(data.substr(nl + 1));
  return doc;
}

DocCache::DocCache(std::shared_ptr<storage::Store> store, std::string prefix, size_t memory_bytes)
    : store_(std::move(store)), prefix_(std::move(prefix)), memory_bytes_(memory_bytes) {}

int64_t DocCache::NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string DocCache::KeyFor(std::string_view ns, std::string_view key) const {
  std::string h = Sha256Hex(key);
  return prefix_ + "docs/" + std::string(ns) + "/" + h.substr(0, 2) + "/" + h;
}

void DocCache::Remember(const std::string& id, const Doc& doc) {
  if (auto it = index_.find(id); it != index_.end()) {
    used_ -= it->second->second.body.size();
    lru_.erase(it->second);
    index_.erase(it);
  }
  if (doc.body.size() > memory_bytes_ / 4) return;  // too big to keep in memory
  lru_.emplace_front(id, doc);
  index_[id] = lru_.begin();
  used_ += doc.body.size();
  while (used_ > memory_bytes_ && !lru_.empty()) {
    used_ -= lru_.back().second.body.size();
    index_.erase(lru_.back().first);
    lru_.pop_back();
  }
}

std::optional<Doc> DocCache::Get(std::string_view ns, std::string_view key) {
  std::string id = KeyFor(ns, key);
  {
    MutexLock lock(mu_);
    if (auto it = index_.find(id); it != index_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second);
      return it->second->second;
    }
  }
  std::string data;
  Status s = store_->Read(id, {}, [&](std::string_view chunk) {
    data.append(chunk);
    return Status();
  });
  if (!s.ok()) {
    if (s.code() != StatusCode::kNotFound) {
      Log(LogLevel::kWarn, "proxy: cannot read cached document: {}", s.message());
    }
    return std::nullopt;
  }
  auto doc = DecodeDoc(key, data);
  if (!doc) return std::nullopt;
  MutexLock lock(mu_);
  Remember(id, *doc);
  return doc;
}

Status DocCache::Put(std::string_view ns, std::string_view key, Doc doc) {
  std::string id = KeyFor(ns, key);
  std::string data = EncodeDoc(key, doc);
  {
    MutexLock lock(mu_);
    Remember(id, doc);
  }
  auto writer = store_->NewWriter(id, {});
  if (!writer.ok()) return writer.status();
  Status s = (*writer)->Append(data);
  if (!s.ok()) {
    (*writer)->Abort();
    return s;
  }
  auto info = (*writer)->Commit();
  return info.ok() ? Status() : info.status();
}

}  // namespace ferry::proxy
