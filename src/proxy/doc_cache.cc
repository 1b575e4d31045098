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
    : store_(std::move(store)), prefix_(std::move(prefix)), memory_bytes_(memory_bytes) {
  writer_ = std::thread([this] { WriterLoop(); });
}

DocCache::~DocCache() {
  {
    MutexLock lock(mu_);
    stop_ = true;
    cv_.NotifyAll();
  }
  writer_.join();
}

void DocCache::WriterLoop() {
  while (true) {
    std::pair<std::string, std::string> item;
    {
      MutexLock lock(mu_);
      cv_.Wait(lock, [&]() REQUIRES(mu_) { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and everything is written
      item = std::move(queue_.front());
      queue_.pop_front();
      writing_ = true;
    }
    Status s = Write(item.first, item.second);
    MutexLock lock(mu_);
    writing_ = false;
    // Forget the queued copy unless a newer Put queued it again.
    bool again = false;
    for (const auto& q : queue_) again = again || q.first == item.first;
    if (!again) queued_.erase(item.first);
    if (!s.ok()) {
      Log(LogLevel::kWarn, "proxy: cannot store a cached document: {}", s.message());
      if (write_error_.ok()) write_error_ = s;
    }
    cv_.NotifyAll();
  }
}

Status DocCache::Flush() {
  MutexLock lock(mu_);
  cv_.Wait(lock, [&]() REQUIRES(mu_) { return queue_.empty() && !writing_; });
  Status s = write_error_;
  write_error_ = Status();
  return s;
}

Status DocCache::Write(const std::string& id, const std::string& data) {
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
    if (auto it = queued_.find(id); it != queued_.end()) return it->second;
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
  MutexLock lock(mu_);
  Remember(id, doc);
  queued_[id] = std::move(doc);
  queue_.emplace_back(id, std::move(data));
  cv_.NotifyAll();
  return Status();
}

}  // namespace ferry::proxy
