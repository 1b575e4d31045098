#include "storage/memory/memory_store.h"

#include <map>

#include "base/hash.h"
#include "base/mutex.h"
#include "base/strings.h"

namespace ferry::storage {

namespace {

struct Object {
  std::string data;
  std::map<std::string, std::string> metadata;
  std::string etag;
  SystemTime modified;
};

class MemoryStore final : public Store, public std::enable_shared_from_this<MemoryStore> {
 public:
  explicit MemoryStore(std::string name) : name_(std::move(name)) {}

  std::string UrlFor(std::string_view key) const override {
    return "mem://" + name_ + "/" + std::string(key);
  }
  Capabilities capabilities() const override {
    return {.server_side_copy = true,
            .conditional_write = true,
            .batch_delete = false,
            .part_writes = true,
            .commit_metadata_limit = UINT64_MAX,
            .checksums = ChecksumSource::kStoredMetadata};
  }

  StoreDescription Describe() override { return {.kind = "memory", .endpoint = UrlFor("")}; }

  Result<ObjectInfo> Stat(std::string_view key) override {
    MutexLock lock(mu_);
    auto it = objects_.find(key);
    if (it == objects_.end()) return NotFound("Stat '" + UrlFor(key) + "': no such object");
    return Info(it->first, it->second, true);
  }

  Status Read(std::string_view key, const ReadOptions& options, const ByteSink& sink) override {
    std::string data;
    {
      MutexLock lock(mu_);
      auto it = objects_.find(key);
      if (it == objects_.end()) return NotFound("Read '" + UrlFor(key) + "': no such object");
      if (!options.if_match.empty() && options.if_match != it->second.etag) {
        return Status(StatusCode::kFailedPrecondition,
                      "Read '" + UrlFor(key) + "': object changed");
      }
      data = it->second.data;
      if (options.info) *options.info = Info(it->first, it->second, true);
    }
    uint64_t off = options.range ? options.range->offset : 0;
    if (off > data.size()) {
      return Status(StatusCode::kOutOfRange, "Read '" + UrlFor(key) + "': offset " +
                                                 std::to_string(off) + " is past the end");
    }
    uint64_t len = data.size() - off;
    if (options.range && options.range->length) len = std::min(len, *options.range->length);
    if (len == 0) return Status();
    return sink(std::string_view(data).substr(off, len));
  }

  Result<std::unique_ptr<Writer>> NewWriter(std::string_view key,
                                            const WriteOptions& options) override;

  Result<std::unique_ptr<PartWriter>> NewPartWriter(std::string_view key,
                                                    const PartWriteOptions& options) override;

  // Pending part uploads by resume token (kept until commit or abort, like S3 uploads).
  void PutPart(const std::string& token, int number, std::string data) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    pending_[token][number] = std::move(data);
  }
  std::map<int, std::string> PendingParts(const std::string& token) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    auto it = pending_.find(token);
    return it == pending_.end() ? std::map<int, std::string>() : it->second;
  }
  void DropPending(const std::string& token) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    pending_.erase(token);
  }

  Result<ListPage> List(const ListOptions& options) override {
    MutexLock lock(mu_);
    std::vector<std::string> keys;
    keys.reserve(objects_.size());
    for (const auto& [k, _] : objects_) keys.push_back(k);
    return PageFromSortedKeys(
        keys,
        [&](size_t i)
            REQUIRES(mu_) { return Info(keys[i], objects_.find(keys[i])->second, false); },
        options);
  }

  Status Delete(std::string_view key) override {
    MutexLock lock(mu_);
    if (auto it = objects_.find(key); it != objects_.end()) objects_.erase(it);
    return Status();
  }

  Status Copy(std::string_view src, std::string_view dst) override {
    MutexLock lock(mu_);
    auto it = objects_.find(src);
    if (it == objects_.end()) return NotFound("Copy '" + UrlFor(src) + "': no such object");
    Object copy = it->second;
    copy.modified = std::chrono::system_clock::now();
    objects_[std::string(dst)] = std::move(copy);
    return Status();
  }

  Result<ObjectInfo> Put(const std::string& key, std::string data, const WriteOptions& options) {
    MutexLock lock(mu_);
    if (options.if_none_match && objects_.contains(key)) {
      return Status(StatusCode::kAlreadyExists, "Write '" + UrlFor(key) + "': object exists");
    }
    Object obj{.data = std::move(data),
               .metadata = options.metadata,
               .modified = std::chrono::system_clock::now()};
    obj.etag = HexEncode(Md5(obj.data));
    auto& slot = objects_[key] = std::move(obj);
    return Info(key, slot, true);
  }

 private:
  static ObjectInfo Info(const std::string& key, const Object& o, bool with_metadata) {
    ObjectInfo info{.key = key, .size = o.data.size(), .modified = o.modified, .etag = o.etag};
    if (with_metadata) info.metadata = o.metadata;
    return info;
  }

  std::string name_;
  Mutex mu_;
  std::map<std::string, Object, std::less<>> objects_ GUARDED_BY(mu_);
  std::map<std::string, std::map<int, std::string>> pending_ GUARDED_BY(mu_);
  uint64_t tokens_ GUARDED_BY(mu_) = 0;
};

class MemoryPartWriter final : public PartWriter {
 public:
  MemoryPartWriter(std::shared_ptr<MemoryStore> store, std::string key, std::string token,
                   PartWriteOptions options)
      : store_(std::move(store)),
        key_(std::move(key)),
        token_(std::move(token)),
        options_(std::move(options)) {}

  Status WritePart(int number, std::string_view data) override {
    store_->PutPart(token_, number, std::string(data));
    return Status();
  }
  Result<std::map<int, std::string>> StoredParts() override {
    std::map<int, std::string> out;
    for (const auto& [n, d] : store_->PendingParts(token_)) out[n] = HexEncode(Md5(d));
    return out;
  }
  Result<ObjectInfo> Commit() override {
    std::string data;
    for (const auto& [n, d] : store_->PendingParts(token_)) data += d;
    if (data.size() != options_.size) {
      return Status(StatusCode::kFailedPrecondition,
                    "Commit '" + store_->UrlFor(key_) + "': parts are missing");
    }
    store_->DropPending(token_);
    return store_->Put(key_, std::move(data), options_.write);
  }
  Result<ObjectInfo> CommitWithMetadata(
      const std::map<std::string, std::string>& metadata) override {
    for (const auto& [k, v] : metadata) options_.write.metadata[k] = v;
    return Commit();
  }
  void Abort() override { store_->DropPending(token_); }
  std::string resume_token() const override { return token_; }

 private:
  std::shared_ptr<MemoryStore> store_;
  std::string key_, token_;
  PartWriteOptions options_;
};

Result<std::unique_ptr<PartWriter>> MemoryStore::NewPartWriter(std::string_view key,
                                                               const PartWriteOptions& options) {
  std::string token = options.resume_token;
  {
    MutexLock lock(mu_);
    if (token.empty()) {
      token = "upload-" + std::to_string(++tokens_);
      pending_[token];
    } else if (!pending_.contains(token)) {
      return NotFound("resume '" + UrlFor(key) + "': no such upload");
    }
  }
  return std::unique_ptr<PartWriter>(
      new MemoryPartWriter(shared_from_this(), std::string(key), token, options));
}

class MemoryWriter final : public Writer {
 public:
  MemoryWriter(std::shared_ptr<MemoryStore> store, std::string key, WriteOptions options)
      : store_(std::move(store)), key_(std::move(key)), options_(std::move(options)) {}
  Status Append(std::string_view data) override {
    if (done_) return Status(StatusCode::kFailedPrecondition, "writer already finished");
    data_.append(data);
    return Status();
  }
  Result<ObjectInfo> Commit() override {
    if (done_) return Status(StatusCode::kFailedPrecondition, "writer already finished");
    done_ = true;
    return store_->Put(key_, std::move(data_), options_);
  }
  void Abort() override { done_ = true; }

 private:
  std::shared_ptr<MemoryStore> store_;
  std::string key_;
  WriteOptions options_;
  std::string data_;
  bool done_ = false;
};

Result<std::unique_ptr<Writer>> MemoryStore::NewWriter(std::string_view key,
                                                       const WriteOptions& options) {
  if (key.empty()) return InvalidArgument("Write '" + UrlFor(key) + "': empty key");
  return std::unique_ptr<Writer>(new MemoryWriter(shared_from_this(), std::string(key), options));
}

}  // namespace

std::shared_ptr<Store> MakeMemoryStore(std::string name) {
  return std::make_shared<MemoryStore>(std::move(name));
}

}  // namespace ferry::storage
